/**
 * Download audio named by a URL: http/https only, redirects followed by
 * hand so every hop is checked by the address policy, connect and total timeouts, and the byte cap
 * enforced while the body streams in (a lying or absent Content-Length cannot get past it).
 */
import { errors as undiciErrors, request, type Dispatcher } from 'undici';
import { AbortedError, AudioUrlError, PayloadTooLargeError } from '../errors.js';
import { findForbiddenAddress, REFUSED_ADDRESS_SENTENCE, type AddressPolicy } from './address-policy.js';

export interface FetchAudioOptions {
  policy: AddressPolicy;
  connectTimeoutMs: number;
  totalTimeoutMs: number;
  /** Redirects followed; one more is refused. */
  maxRedirects: number;
  maxBytes: number;
  /** The caller's cancellation (client went away). */
  signal?: AbortSignal;
}

export interface FetchedAudio {
  bytes: Uint8Array;
  contentType: string;
  filename: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Drop a body we will not read; undici reports the destroy as an 'error' that must be heard. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => {});
  body.destroy();
}

/** Parse and vet one URL (the first, or a redirect target). */
function checkUrl(raw: string, policy: AddressPolicy, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    throw new AudioUrlError(base ? `Audio URL redirected to an invalid location: ${raw}` : `Audio URL is not a valid URL: ${raw}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new AudioUrlError(`Audio URL must use http or https (got ${url.protocol.replace(/:$/, '')})`);
  if (url.username || url.password) throw new AudioUrlError('Audio URL must not carry credentials');
  try {
    policy.assertHostAllowed(url.hostname);
  } catch (err) {
    const refused = findForbiddenAddress(err);
    if (refused) throw new AudioUrlError(`Audio URL is not allowed: ${REFUSED_ADDRESS_SENTENCE}`, { cause: refused });
    throw err;
  }
  return url;
}

/** metadata.filename: the last path segment of the final URL, else "audio". */
export function filenameFromUrl(url: URL): string {
  const segment = url.pathname.split('/').filter(Boolean).pop();
  if (!segment) return 'audio';
  try {
    return decodeURIComponent(segment) || 'audio';
  } catch {
    return segment;
  }
}

export async function fetchAudio(rawUrl: string, options: FetchAudioOptions): Promise<FetchedAudio> {
  const { policy, maxBytes } = options;
  const timeout = AbortSignal.timeout(options.totalTimeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const agent = policy.createAgent({ connectTimeoutMs: options.connectTimeoutMs });
  let url = checkUrl(rawUrl, policy);

  /** Map whatever undici or the body stream threw to a domain error. */
  const translate = (err: unknown): unknown => {
    if (err instanceof AudioUrlError || err instanceof PayloadTooLargeError) return err;
    if (options.signal?.aborted) return new AbortedError();
    if (timeout.aborted) return new AudioUrlError(`Audio URL timed out after ${options.totalTimeoutMs} ms`);
    const refused = findForbiddenAddress(err);
    if (refused) return new AudioUrlError(`Audio URL is not allowed: ${REFUSED_ADDRESS_SENTENCE}`, { cause: refused });
    if (err instanceof undiciErrors.ConnectTimeoutError)
      return new AudioUrlError(`Audio URL timed out while connecting to ${url.host} (${options.connectTimeoutMs} ms)`);
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const detail = (err as { code?: string }).code ?? cause?.code ?? (err as Error).message;
    return new AudioUrlError(`Audio URL could not be fetched from ${url.host}: ${detail}`);
  };

  try {
    for (let redirects = 0; ; redirects++) {
      let response: Dispatcher.ResponseData;
      try {
        response = await request(url, {
          method: 'GET',
          dispatcher: agent,
          signal,
          headers: { accept: 'audio/*, */*;q=0.5', 'user-agent': 'Parley' },
        });
      } catch (err) {
        throw translate(err);
      }
      const { statusCode, headers, body } = response;

      if (REDIRECTS.has(statusCode)) {
        discard(body);
        const location = headers.location;
        if (typeof location !== 'string' || !location) throw new AudioUrlError(`Audio URL answered ${statusCode} without a Location`);
        if (redirects >= options.maxRedirects) throw new AudioUrlError(`Audio URL redirected more than ${options.maxRedirects} times`);
        url = checkUrl(location, policy, url);
        continue;
      }
      if (statusCode < 200 || statusCode > 299) {
        discard(body);
        throw new AudioUrlError(`Audio URL answered HTTP ${statusCode}`);
      }

      const announced = Number(headers['content-length']);
      if (Number.isFinite(announced) && announced > maxBytes) {
        discard(body);
        throw new PayloadTooLargeError(maxBytes, `Audio at the URL is ${announced} bytes, more than the limit of ${maxBytes}`);
      }
      const chunks: Buffer[] = [];
      let total = 0;
      try {
        for await (const chunk of body) {
          total += (chunk as Buffer).length;
          if (total > maxBytes) {
            discard(body);
            throw new PayloadTooLargeError(maxBytes, `Audio at the URL is more than the limit of ${maxBytes} bytes`);
          }
          chunks.push(chunk as Buffer);
        }
      } catch (err) {
        discard(body);
        throw translate(err);
      }
      const type = headers['content-type'];
      return {
        bytes: new Uint8Array(Buffer.concat(chunks, total)),
        contentType: (Array.isArray(type) ? type[0] : type) ?? 'application/octet-stream',
        filename: filenameFromUrl(url),
      };
    }
  } finally {
    // Not awaited: close() waits for idle sockets, destroy() cuts a body we stopped reading.
    agent.destroy().catch(() => {});
  }
}
