/**
 * One webhook request and what its answer means for the delivery:
 * 2xx acknowledges; 5xx, 408, 429, a timeout or a connection error is worth retrying; anything
 * else (other 4xx, a redirect, an address the policy refuses) ends delivery. Redirects are not
 * followed: the receiver's URL is the one the client gave.
 */
import { request, type Dispatcher } from 'undici';
import { findForbiddenAddress, REFUSED_ADDRESS_SENTENCE, type AddressPolicy } from '../net/address-policy.js';

/**
 * The methods a webhook may be delivered with (`webhook_method`). A GET carries the same JSON
 * payload and signature as a POST: the payload holds the whole transcript, which no URL has room
 * for.
 */
export const WEBHOOK_METHODS = ['GET', 'POST'] as const;
export type WebhookMethod = (typeof WEBHOOK_METHODS)[number];
export const DEFAULT_WEBHOOK_METHOD: WebhookMethod = 'POST';

export function isWebhookMethod(value: string): value is WebhookMethod {
  return (WEBHOOK_METHODS as readonly string[]).includes(value);
}

export type DeliveryVerdict = 'acknowledged' | 'retry' | 'final' | 'aborted';

export interface DeliveryResult {
  verdict: DeliveryVerdict;
  statusCode: number | null;
  /** Why it did not succeed, as the account may read it; null when acknowledged. */
  error: string | null;
  /** What the operator's log adds to `error` (what a refused name resolved to). */
  detail?: string;
  durationMs: number;
}

export function classifyStatus(status: number): DeliveryVerdict {
  if (status >= 200 && status <= 299) return 'acknowledged';
  if (status >= 500 || status === 408 || status === 429) return 'retry';
  return 'final';
}

/** Receivers answer with small bodies; we read at most this much and ignore it. */
const MAX_RESPONSE_BYTES = 64 * 1024;

export class WebhookSender {
  private readonly agent: Dispatcher;

  constructor(
    private readonly policy: AddressPolicy,
    private readonly timeoutMs: number,
    private readonly clock: () => number = Date.now,
  ) {
    this.agent = policy.createAgent({ connectTimeoutMs: timeoutMs });
  }

  /** Send `body` with `method`; never throws. `signal` aborts at shutdown (verdict "aborted", nothing to record). */
  async send(url: string, body: string, headers: Record<string, string>, signal?: AbortSignal, method: WebhookMethod = DEFAULT_WEBHOOK_METHOD): Promise<DeliveryResult> {
    const started = this.clock();
    const done = (verdict: DeliveryVerdict, statusCode: number | null, error: string | null, detail?: string): DeliveryResult => ({
      verdict,
      statusCode,
      error,
      ...(detail === undefined ? {} : { detail }),
      durationMs: Math.max(0, this.clock() - started),
    });
    try {
      const target = new URL(url);
      if (target.protocol !== 'http:' && target.protocol !== 'https:') return done('final', null, `webhook URL must use http or https`);
      this.policy.assertHostAllowed(target.hostname);
    } catch (err) {
      const refused = findForbiddenAddress(err);
      return refused ? done('final', null, `webhook address not allowed: ${REFUSED_ADDRESS_SENTENCE}`, refused.message) : done('final', null, 'webhook URL is invalid');
    }

    const timeout = AbortSignal.timeout(this.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    try {
      const response = await request(url, {
        method,
        dispatcher: this.agent,
        headers,
        body,
        signal: combined,
      });
      await drain(response.body);
      const verdict = classifyStatus(response.statusCode);
      return done(verdict, response.statusCode, verdict === 'acknowledged' ? null : `receiver answered HTTP ${response.statusCode}`);
    } catch (err) {
      if (signal?.aborted) return done('aborted', null, 'shutting down');
      if (timeout.aborted) return done('retry', null, `timed out after ${this.timeoutMs} ms`);
      const refused = findForbiddenAddress(err);
      if (refused) return done('final', null, `webhook address not allowed: ${REFUSED_ADDRESS_SENTENCE}`, refused.message);
      const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
      return done('retry', null, `connection failed: ${e.code ?? e.cause?.code ?? e.message ?? 'unknown error'}`);
    }
  }

  async close(): Promise<void> {
    await this.agent.destroy();
  }
}

async function drain(body: Dispatcher.ResponseData['body']): Promise<void> {
  try {
    await body.dump({ limit: MAX_RESPONSE_BYTES });
  } catch {
    /* the status is what counts; a broken body after it does not change the verdict */
  }
}
