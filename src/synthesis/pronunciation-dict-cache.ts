/**
 * Compiled pronunciation dictionaries, kept per dictionary id and version: a request asks the
 * database only for the versions of the dictionaries it names, and loads and compiles only those
 * that changed since they were last compiled (on this node). Bounded by the entries it holds,
 * least recently used first out.
 */
import type { PronunciationDictRepository } from '../store/pronunciation-dict-repository.js';
import { compilePronunciationDict, type CompiledPronunciationDict } from './text/pronunciation.js';

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
        const dict = compilePronunciationDict(row.items);
        compiled.set(row.id, dict);
        this.store(row.id, { version: row.version, dict });
      }
    }
    // A dictionary deleted between the two queries is missing as well.
    for (const id of ids) if (!compiled.has(id) && !missing.includes(id)) missing.push(id);
    return { found: ids.flatMap((id) => (compiled.has(id) ? [compiled.get(id)!] : [])), missing };
  }

  private touch(id: string, value: Cached): void {
    this.cache.delete(id);
    this.cache.set(id, value);
  }

  private store(id: string, value: Cached): void {
    const old = this.cache.get(id);
    if (old) {
      this.entries -= old.dict.size;
      this.cache.delete(id);
    }
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
