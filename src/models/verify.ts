/**
 * Decides which model packs the server may load. sherpa-onnx ends the whole process (exit/abort,
 * no JS exception) on a malformed model or missing metadata, so a pack is only usable after:
 *
 *  1. every role file exists (folders for dataDir; each part of a comma-separated lexicon);
 *  2. the sha256 sums the pack declares (pack.json / the pull record) match;
 *  3. every .onnx file parses as an ONNX protobuf and the main model carries the metadata sherpa
 *     reads without a default for that kind (Piper/VITS: sample_rate, n_speakers, language...);
 *  4. a test load in a CHILD process (src/engines/inference/test-load.ts): the config the family's builder
 *     makes here, the one the server's engines load (enginePackOf), goes to the child, which
 *     constructs the sherpa object from it and runs a tiny inference, then exits 0.
 *     A crash, signal, non-zero exit or timeout skips the pack with the reason.
 *
 * Verdicts are cached on disk (one JSON file per pack in cacheDir) keyed by the pack id, its
 * files' sizes and mtimes, the espeak-ng-data used and the sherpa-onnx-node version, so a restart
 * does not test unchanged packs again. Timeouts are not cached (they may be load, not the pack).
 * At most two child tests run at once.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { readOnnxMetadataSync } from './onnx-metadata.js';
import type { EngineConfigs } from '../engines/capabilities.js';
import type { ModelPack } from './model-pack.js';
import { sherpaOnnxVersion } from '../engines/sherpa-onnx.js';
import { childArgs } from '../engines/spawn.js';
import { ERROR_MARK, OK_MARK, testLoadEntry, type TestLoadJob } from '../engines/test-load-protocol.js';
import { capabilityOf, enginePackOf, kindOf } from './families/index.js';

export interface VerifyOptions {
  /** Where verdicts are cached (see verdictCacheDir). */
  cacheDir: string;
  /** espeak-ng-data for TTS packs that ship none. */
  espeakDataDir: string;
  /** Per child test load; default 120 s (a large model on a slow disk takes a while). */
  timeoutMs?: number;
  /** Ignore cached verdicts (they are still rewritten). Default false. */
  fresh?: boolean;
  /** Child tests at once; default 2. */
  concurrency?: number;
  /** Only report cached verdicts; packs without one come back `unverified` (no checks run). */
  cacheOnly?: boolean;
}

export interface SkippedPack {
  pack: ModelPack;
  reason: string;
}

/** What a verdict says and where it came from (for `parley models verify`). */
export interface PackVerdict {
  id: string;
  usable: boolean;
  reason?: string;
  /** Facts the test load reported (numSpeakers, sampleRate...). */
  info?: Record<string, unknown>;
  checkedAt: string;
  fromCache: boolean;
  /** cacheOnly and no cached verdict: nothing was checked. */
  unverified?: boolean;
}

/** Bump when the checks change so older cached verdicts are not trusted. */
const VERIFIER_VERSION = 1;
const DEFAULT_TIMEOUT_MS = 120_000;

export function verdictCacheDir(dataDir: string): string {
  return path.join(dataDir, 'model-verdicts');
}

const NUMERIC_METADATA = new Set(['sample_rate', 'n_speakers', 'window_size', 'num_speakers', 'output_dim', 'vocab_size']);

/** The ONNX file whose metadata sherpa reads first for the kind. */
function mainModel(pack: ModelPack): string | undefined {
  return pack.files.model ?? pack.files.encoder ?? pack.files.acousticModel;
}

/** Every path a pack names (lexicons split), by role. */
function packPaths(pack: ModelPack): Array<{ role: string; file: string }> {
  const out: Array<{ role: string; file: string }> = [];
  for (const [role, value] of Object.entries(pack.files)) {
    const parts = role === 'lexicon' || role === 'lexiconGb' || role === 'ruleFsts' ? value.split(',') : [value];
    for (const p of parts) if (p.trim()) out.push({ role, file: p.trim() });
  }
  return out;
}

function usesSharedEspeak(pack: ModelPack): boolean {
  return kindOf(pack.kind).usesSharedEspeak?.(pack) ?? false;
}

/** A segmentation pack is only loaded together with an embedding pack. */
const needsPartner = (pack: ModelPack) => capabilityOf(pack.kind) === 'segmentation';
const isPartner = (pack: ModelPack) => capabilityOf(pack.kind) === 'embedding';

/**
 * What the test-load child loads: the engine config the pack's family builds, through the same
 * function the server's engines take it from (enginePackOf), with one intra-op thread.
 */
export function testLoadJob(pack: ModelPack, opts: { espeakDataDir: string; partner?: ModelPack }): TestLoadJob {
  const build = { espeakDataDir: opts.espeakDataDir, numThreads: 1 };
  const engine = enginePackOf(pack, build);
  const partner = opts.partner ? enginePackOf(opts.partner, build) : undefined;
  return {
    capability: engine.capability,
    config: engine.config,
    languages: engine.languages,
    ...(partner?.capability === 'embedding' ? { partner: partner.config as EngineConfigs['embedding'] } : {}),
  } as TestLoadJob;
}

/**
 * The pack's files as they are now (role, path, size, modification time): a pack with the same
 * revision is the same model, which a reload keeps instead of loading it again.
 */
export function packRevision(pack: ModelPack): string {
  const files = packPaths(pack).map(({ role, file }) => {
    const s = statSync(file);
    return [role, file, s.size, s.mtimeMs];
  });
  return createHash('sha256').update(JSON.stringify([pack.id, pack.kind, files])).digest('hex').slice(0, 16);
}

/** The cache key: the pack's revision, its declared sums, the shared espeak data, versions. */
function verdictKey(pack: ModelPack, espeakDataDir: string, partner?: ModelPack): string {
  const key = {
    v: VERIFIER_VERSION,
    sherpa: sherpaOnnxVersion(),
    revision: packRevision(pack),
    sha256: pack.sha256 ?? null,
    espeak: usesSharedEspeak(pack) ? espeakDataDir : null,
    partner: partner ? { id: partner.id, revision: packRevision(partner) } : null,
  };
  return createHash('sha256').update(JSON.stringify(key)).digest('hex');
}

function cacheFile(cacheDir: string, id: string): string {
  return path.join(cacheDir, `${id.replace(/[^A-Za-z0-9._-]/g, '_')}.json`);
}

interface CachedVerdict {
  key: string;
  usable: boolean;
  reason?: string;
  info?: Record<string, unknown>;
  checkedAt: string;
}

async function readCached(cacheDir: string, id: string, key: string): Promise<CachedVerdict | undefined> {
  try {
    const v = JSON.parse(await readFile(cacheFile(cacheDir, id), 'utf8')) as CachedVerdict;
    return v.key === key ? v : undefined;
  } catch {
    return undefined;
  }
}

async function writeCached(cacheDir: string, id: string, verdict: CachedVerdict): Promise<void> {
  try {
    await mkdir(cacheDir, { recursive: true });
    const file = cacheFile(cacheDir, id);
    const tmp = `${file}.${process.pid}.tmp`;
    await writeFile(tmp, JSON.stringify(verdict, null, 2));
    await rename(tmp, file);
  } catch {
    // A cache that cannot be written only costs a re-test next time.
  }
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Checks 1-3 (no sherpa involved). Returns the reason the pack cannot be used, or undefined. */
export async function staticCheck(pack: ModelPack, espeakDataDir: string): Promise<string | undefined> {
  for (const { role, file } of packPaths(pack)) {
    if (!existsSync(file)) return `${role} file ${file} does not exist`;
    const isDir = statSync(file).isDirectory();
    const folderRole = role === 'dataDir' || role === 'dictDir';
    if (folderRole && !isDir) return `${role} ${file} is not a folder`;
    if (!folderRole && isDir) return `${role} ${file} is a folder, not a file`;
  }
  if (usesSharedEspeak(pack) && !existsSync(path.join(espeakDataDir, 'phontab'))) {
    return `the pack has no espeak-ng-data of its own and ${espeakDataDir} is not an espeak-ng-data folder (install Debian's espeak-ng-data or set synthesis.espeakDataDir)`;
  }
  for (const [rel, expected] of Object.entries(pack.sha256 ?? {})) {
    const file = path.resolve(pack.dir, rel);
    if (!existsSync(file)) return `${rel} (listed with a sha256) does not exist`;
    const got = await sha256File(file);
    if (got.toLowerCase() !== expected.toLowerCase()) return `sha256 of ${rel} is ${got}, expected ${expected}`;
  }
  const main = mainModel(pack);
  for (const { role, file } of packPaths(pack)) {
    if (!file.toLowerCase().endsWith('.onnx')) continue;
    let metadata: Record<string, string>;
    try {
      metadata = readOnnxMetadataSync(file);
    } catch (error) {
      return `${role} ${path.basename(file)} is not a valid ONNX model (${error instanceof Error ? error.message.replace(`${file}: `, '') : String(error)})`;
    }
    if (file !== main) continue;
    const required = kindOf(pack.kind).requiredMetadata ?? [];
    const missing = required.filter((k) => !(k in metadata) || metadata[k] === '');
    if (missing.length > 0) {
      return (
        `${role} ${path.basename(file)} lacks the ONNX metadata ${missing.join(', ')} that sherpa-onnx needs for a ${pack.kind} model ` +
        `(loading it would end the process)`
      );
    }
    for (const k of required) {
      if (NUMERIC_METADATA.has(k) && !(Number(metadata[k]) > 0)) return `${role} ${path.basename(file)} has metadata ${k}=${metadata[k]}, not a positive number`;
    }
  }
  return undefined;
}

export interface TestLoadResult {
  ok: boolean;
  reason?: string;
  info?: Record<string, unknown>;
  timedOut?: boolean;
}

/** Test-loads one pack in a child process. Never throws; never takes this process down. */
export function testLoadPack(
  pack: ModelPack,
  opts: { espeakDataDir: string; timeoutMs?: number; partner?: ModelPack },
): Promise<TestLoadResult> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let job: TestLoadJob;
  try {
    job = testLoadJob(pack, opts);
  } catch (error) {
    return Promise.resolve({ ok: false, reason: `test load failed: ${(error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ')}` });
  }
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(process.execPath, childArgs(testLoadEntry, [JSON.stringify(job)]), {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, ORT_LOGGING_LEVEL: process.env.ORT_LOGGING_LEVEL ?? '3' },
      });
    } catch (error) {
      resolve({ ok: false, reason: `could not start the test-load process: ${error instanceof Error ? error.message : String(error)}` });
      return;
    }
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const keep = (s: string, add: string) => (s + add).slice(-16_384);
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout = keep(stdout, d)));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = keep(stderr, d)));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ ok: false, reason: `test-load process failed: ${error.message}` });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const okLine = stdout.split('\n').find((l) => l.startsWith(OK_MARK));
      const errLine = stdout.split('\n').find((l) => l.startsWith(ERROR_MARK));
      if (timedOut) {
        resolve({ ok: false, timedOut: true, reason: `test load did not finish within ${Math.round(timeoutMs / 1000)} s (killed)` });
      } else if (code === 0 && okLine) {
        let info: Record<string, unknown> = {};
        try {
          info = JSON.parse(okLine.slice(OK_MARK.length).trim()) as Record<string, unknown>;
        } catch {
          // keep {}
        }
        resolve({ ok: true, info });
      } else if (errLine) {
        resolve({ ok: false, reason: `test load failed: ${errLine.slice(ERROR_MARK.length).trim()}` });
      } else {
        const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
        resolve({ ok: false, reason: `sherpa-onnx ${how} while loading the pack${lastLines(stderr || stdout)}` });
      }
    });
  });
}

/** The last meaningful lines of a child's output, for the reason. */
function lastLines(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('at ') && !l.startsWith(OK_MARK));
  const tail = lines.slice(-3).join(' | ');
  return tail ? `: ${tail.slice(0, 600)}` : '';
}

/** A tiny limiter: at most `n` of the given tasks run at once. */
function limiter(n: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0;
  const queue: Array<() => void> = [];
  const next = () => {
    if (active >= n) return;
    const start = queue.shift();
    if (start) {
      active++;
      start();
    }
  };
  return <T>(task: () => Promise<T>) =>
    new Promise<T>((resolve, reject) => {
      queue.push(() => {
        task()
          .then(resolve, reject)
          .finally(() => {
            active--;
            next();
          });
      });
      next();
    });
}

/** Verdicts for every pack, in the order given (also used by `parley models verify`). */
export async function verifyPackVerdicts(packs: ModelPack[], opts: VerifyOptions): Promise<PackVerdict[]> {
  const limit = limiter(Math.max(1, opts.concurrency ?? 2));
  const verdicts = new Map<ModelPack, PackVerdict>();

  const verifyOne = async (pack: ModelPack, partner?: ModelPack): Promise<PackVerdict> => {
    const now = () => new Date().toISOString();
    let key: string;
    try {
      // A missing file fails here (stat); such verdicts are not cached: the file may yet appear.
      const missing = packPaths(pack).find(({ file }) => !existsSync(file));
      if (missing) return { id: pack.id, usable: false, reason: `${missing.role} file ${missing.file} does not exist`, checkedAt: now(), fromCache: false };
      key = verdictKey(pack, opts.espeakDataDir, partner);
    } catch (error) {
      return { id: pack.id, usable: false, reason: error instanceof Error ? error.message : String(error), checkedAt: now(), fromCache: false };
    }
    if (!opts.fresh) {
      const cached = await readCached(opts.cacheDir, pack.id, key);
      if (cached) return { id: pack.id, usable: cached.usable, ...(cached.reason ? { reason: cached.reason } : {}), ...(cached.info ? { info: cached.info } : {}), checkedAt: cached.checkedAt, fromCache: true };
    }
    if (opts.cacheOnly) return { id: pack.id, usable: false, reason: 'not verified yet', checkedAt: now(), fromCache: false, unverified: true };
    const problem = await staticCheck(pack, opts.espeakDataDir);
    if (problem) {
      const verdict: CachedVerdict = { key, usable: false, reason: problem, checkedAt: now() };
      await writeCached(opts.cacheDir, pack.id, verdict);
      return { id: pack.id, usable: false, reason: problem, checkedAt: verdict.checkedAt, fromCache: false };
    }
    if (needsPartner(pack) && !partner) {
      // Only loadable together with an embedding model; the server pairs it with a usable one.
      return { id: pack.id, usable: true, info: { note: 'not test-loaded: no usable embedding pack to pair it with' }, checkedAt: now(), fromCache: false };
    }
    const result = await limit(() =>
      testLoadPack(pack, { espeakDataDir: opts.espeakDataDir, ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}), ...(partner ? { partner } : {}) }),
    );
    const verdict: CachedVerdict = {
      key,
      usable: result.ok,
      ...(result.reason ? { reason: result.reason } : {}),
      ...(result.info ? { info: result.info } : {}),
      checkedAt: now(),
    };
    if (!result.timedOut) await writeCached(opts.cacheDir, pack.id, verdict);
    return { id: pack.id, usable: result.ok, ...(result.reason ? { reason: result.reason } : {}), ...(result.info ? { info: result.info } : {}), checkedAt: verdict.checkedAt, fromCache: false };
  };

  // Segmentation packs are loaded with a speaker-embedding pack, so embeddings go first.
  const first = packs.filter((p) => !needsPartner(p));
  await Promise.all(first.map(async (p) => verdicts.set(p, await verifyOne(p))));
  const partner = first.find((p) => isPartner(p) && verdicts.get(p)?.usable);
  const second = packs.filter(needsPartner);
  await Promise.all(second.map(async (p) => verdicts.set(p, await verifyOne(p, partner))));
  return packs.map((p) => verdicts.get(p)!);
}

export async function verifyPacks(
  packs: ModelPack[],
  opts: { cacheDir: string; espeakDataDir: string; timeoutMs?: number },
): Promise<{ usable: ModelPack[]; skipped: Array<{ pack: ModelPack; reason: string }> }> {
  const verdicts = await verifyPackVerdicts(packs, opts);
  const usable: ModelPack[] = [];
  const skipped: SkippedPack[] = [];
  packs.forEach((pack, i) => {
    const v = verdicts[i]!;
    if (v.usable) usable.push({ ...pack, revision: packRevision(pack) });
    else skipped.push({ pack, reason: v.reason ?? 'unusable' });
  });
  return { usable, skipped };
}
