/**
 * Compiled pronunciation dictionaries, kept per dictionary id and version: a dictionary saved
 * through this process is compiled as it is saved; a request asks the database only for the
 * versions of the dictionaries it names, and loads and compiles only those that changed since
 * (saved by another node, or evicted). Bounded by the memory its dictionaries hold (estimated
 * per entry), least recently used first out. What one request may cost is bounded too: the
 * entries of the dictionaries it names together (InvalidRequestError beyond), and compiling runs
 * one dictionary at a time in the process, so requests arriving together do not each build
 * their own million-entry tries at once.
 */
import type { PronunciationDict, PronunciationDictRepository } from '../store/pronunciation-dict-repository.js';
import { yieldToEventLoop } from '../concurrency/event-loop.js';
import { InvalidRequestError } from '../errors.js';
import { PronunciationDictBuilder, type CompiledPronunciationDict, type PronunciationEntry } from './text/pronunciation.js';

/** Entries compiled between two yields to the event loop (a few milliseconds of work). */
const COMPILE_SLICE = 500;

/**
 * Heap one compiled entry holds beyond its text: measured 335 bytes per entry (trie node, its map,
 * the token key) for 50,000 entries of 6 to 60 characters, whatever their length.
 */
const ENTRY_OVERHEAD_BYTES = 340;

/** Estimated heap of a compiled dictionary of `items`: overhead per entry plus its text. */
export function compiledBytes(items: readonly PronunciationEntry[]): number {
  let bytes = 0;
  for (const item of items) bytes += ENTRY_OVERHEAD_BYTES + item.word.length + item.pronunciation.length;
  return bytes;
}

/** Compile without holding the event loop: a 10,000-entry dictionary takes tens of milliseconds. */
async function compileInSlices(items: readonly PronunciationEntry[]): Promise<CompiledPronunciationDict> {
  const builder = new PronunciationDictBuilder();
  for (let at = 0; at < items.length; at += COMPILE_SLICE) {
    if (at > 0) await yieldToEventLoop();
    for (const item of items.slice(at, at + COMPILE_SLICE)) builder.add(item);
  }
  return builder.build();
}

interface Cached {
  version: string;
  dict: CompiledPronunciationDict;
  bytes: number;
}

export interface DictCacheLimits {
  /** Estimated heap the compiled dictionaries may hold together (compiledBytes). */
  maxBytes: number;
  /** Entries the dictionaries one request names may hold together (0 = no limit). */
  maxEntriesPerRequest?: number;
}

export class PronunciationDictCache {
  private readonly cache = new Map<string, Cached>();
  private bytes = 0;
  /** The compile under way: the next one starts after it. */
  private compiling: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly repo: Pick<PronunciationDictRepository, 'versions' | 'findMany'>,
    private readonly limits: DictCacheLimits,
  ) {}

  /** The account's dictionaries of `ids`, compiled, in the order asked; ids it does not own are `missing`. */
  async load(accountId: string, ids: string[]): Promise<{ found: CompiledPronunciationDict[]; missing: string[] }> {
    if (ids.length === 0) return { found: [], missing: [] };
    const versions = await this.repo.versions(accountId, ids);
    const missing = ids.filter((id) => !versions.has(id));
    const compiled = new Map<string, CompiledPronunciationDict>();
    const stale: string[] = [];
    let entries = 0;
    for (const [id, version] of versions) {
      const hit = this.cache.get(id);
      if (hit && hit.version === version) {
        compiled.set(id, hit.dict);
        entries += hit.dict.size;
        this.touch(id, hit);
      } else {
        stale.push(id);
      }
    }
    this.checkEntries(entries);
    if (stale.length) {
      // Loaded rows carry their own version: an update between the two queries is simply newer.
      const rows = (await this.repo.findMany(accountId, stale)).found;
      // Counted before anything is compiled: a request over the bound costs no compile.
      this.checkEntries(rows.reduce((n, row) => n + row.items.length, entries));
      for (const row of rows) {
        const dict = await this.compile(row.items);
        compiled.set(row.id, dict);
        this.store(row.id, { version: row.version, dict, bytes: compiledBytes(row.items) });
      }
    }
    // A dictionary deleted between the two queries is missing as well.
    for (const id of ids) if (!compiled.has(id) && !missing.includes(id)) missing.push(id);
    return { found: ids.flatMap((id) => (compiled.has(id) ? [compiled.get(id)!] : [])), missing };
  }

  /** Compile a dictionary just saved, so that the first request using it finds it ready. */
  async remember(dict: Pick<PronunciationDict, 'id' | 'version' | 'items'>): Promise<void> {
    this.store(dict.id, { version: dict.version, dict: await this.compile(dict.items), bytes: compiledBytes(dict.items) });
  }

  /** Drop a deleted dictionary (other nodes drop theirs as they are evicted: no request can reach them). */
  forget(id: string): void {
    const old = this.cache.get(id);
    if (!old) return;
    this.cache.delete(id);
    this.bytes -= old.bytes;
  }

  /** Estimated heap held now (for the readiness report and tests). */
  get heldBytes(): number {
    return this.bytes;
  }

  private checkEntries(entries: number): void {
    const max = this.limits.maxEntriesPerRequest ?? 0;
    if (max > 0 && entries > max)
      throw new InvalidRequestError(`pronunciation_dicts hold ${entries} entries together; one request may use at most ${max}`);
  }

  /** One compile at a time in the process; the others wait their turn. */
  private compile(items: readonly PronunciationEntry[]): Promise<CompiledPronunciationDict> {
    const run = this.compiling.then(() => compileInSlices(items));
    this.compiling = run.catch(() => undefined);
    return run;
  }

  private touch(id: string, value: Cached): void {
    this.cache.delete(id);
    this.cache.set(id, value);
  }

  private store(id: string, value: Cached): void {
    this.forget(id);
    if (value.bytes > this.limits.maxBytes) return;
    this.cache.set(id, value);
    this.bytes += value.bytes;
    for (const [oldestId, oldest] of this.cache) {
      if (this.bytes <= this.limits.maxBytes) break;
      this.cache.delete(oldestId);
      this.bytes -= oldest.bytes;
    }
  }
}
