/**
 * Compiled pronunciation dictionaries, kept per dictionary id and version: a dictionary saved
 * through this process is compiled as it is saved; a request asks the database only for the
 * versions of the dictionaries it names, and loads and compiles only those that changed since
 * (saved by another node, or evicted). Bounded by the entries it holds (about 325 bytes each),
 * least recently used first out.
 */
import type { PronunciationDict, PronunciationDictRepository } from '../store/pronunciation-dict-repository.js';
import { yieldToEventLoop } from '../audio/event-loop.js';
import { PronunciationDictBuilder, type CompiledPronunciationDict, type PronunciationEntry } from './text/pronunciation.js';

/** Entries compiled between two yields to the event loop (a few milliseconds of work). */
const COMPILE_SLICE = 500;

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
}

export class PronunciationDictCache {
  private readonly cache = new Map<string, Cached>();
  private entries = 0;

  constructor(
    private readonly repo: Pick<PronunciationDictRepository, 'versions' | 'findMany'>,
    /** Dictionary entries held compiled at most (the sum of their sizes). */
    private readonly maxEntries: number,
  ) {}

  /** The account's dictionaries of `ids`, compiled, in the order asked; ids it does not own are `missing`. */
  async load(accountId: string, ids: string[]): Promise<{ found: CompiledPronunciationDict[]; missing: string[] }> {
    if (ids.length === 0) return { found: [], missing: [] };
    const versions = await this.repo.versions(accountId, ids);
    const missing = ids.filter((id) => !versions.has(id));
    const compiled = new Map<string, CompiledPronunciationDict>();
    const stale: string[] = [];
    for (const [id, version] of versions) {
      const hit = this.cache.get(id);
      if (hit && hit.version === version) {
        compiled.set(id, hit.dict);
        this.touch(id, hit);
      } else {
        stale.push(id);
      }
    }
    if (stale.length) {
      // Loaded rows carry their own version: an update between the two queries is simply newer.
      for (const row of (await this.repo.findMany(accountId, stale)).found) {
        const dict = await compileInSlices(row.items);
        compiled.set(row.id, dict);
        this.store(row.id, { version: row.version, dict });
      }
    }
    // A dictionary deleted between the two queries is missing as well.
    for (const id of ids) if (!compiled.has(id) && !missing.includes(id)) missing.push(id);
    return { found: ids.flatMap((id) => (compiled.has(id) ? [compiled.get(id)!] : [])), missing };
  }

  /** Compile a dictionary just saved, so that the first request using it finds it ready. */
  async remember(dict: Pick<PronunciationDict, 'id' | 'version' | 'items'>): Promise<void> {
    this.store(dict.id, { version: dict.version, dict: await compileInSlices(dict.items) });
  }

  /** Drop a deleted dictionary (other nodes drop theirs as they are evicted: no request can reach them). */
  forget(id: string): void {
    const old = this.cache.get(id);
    if (!old) return;
    this.cache.delete(id);
    this.entries -= old.dict.size;
  }

  private touch(id: string, value: Cached): void {
    this.cache.delete(id);
    this.cache.set(id, value);
  }

  private store(id: string, value: Cached): void {
    this.forget(id);
    if (value.dict.size > this.maxEntries) return;
    this.cache.set(id, value);
    this.entries += value.dict.size;
    for (const [oldestId, oldest] of this.cache) {
      if (this.entries <= this.maxEntries) break;
      this.cache.delete(oldestId);
      this.entries -= oldest.dict.size;
    }
  }
}
