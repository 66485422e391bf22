/**
 * The compiled-dictionary cache on a real SQLite store: compiled once per saved version, reloaded
 * when another writer (another node) changed a dictionary, scoped to the owning account, bounded.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AccountRepository } from '../../src/store/account-repository.js';
import { openStore, type Store } from '../../src/store/database.js';
import { PronunciationDictRepository } from '../../src/store/pronunciation-dict-repository.js';
import { compiledBytes, PronunciationDictCache } from '../../src/synthesis/pronunciation-dict-cache.js';
import { applyPronunciationDicts } from '../../src/synthesis/text/pronunciation.js';

describe('PronunciationDictCache', () => {
  let store: Store;
  let repo: PronunciationDictRepository;
  let accountId: string;
  let loads = 0;
  before(async () => {
    store = await openStore({ databaseUrl: '', dataDir: mkdtempSync(path.join(tmpdir(), 'parley-dict-cache-')) });
    repo = new PronunciationDictRepository(store.db);
    const findMany = repo.findMany.bind(repo);
    repo.findMany = (...args) => {
      loads++;
      return findMany(...args);
    };
    accountId = (await new AccountRepository(store.db).create('cache')).id;
  });
  after(() => store.close());

  const say = async (cache: PronunciationDictCache, ids: string[], text: string) =>
    applyPronunciationDicts(text, (await cache.load(accountId, ids)).found).text;

  it('compiles a saved dictionary once, and again only when its items changed elsewhere', async () => {
    const cache = new PronunciationDictCache(repo, { maxBytes: 100_000 });
    const d = await repo.create(accountId, [{ word: 'tomato', pronunciation: 'tomahto' }]);
    await cache.remember(d);
    loads = 0;
    assert.equal(await say(cache, [d.id], 'a tomato'), 'a tomahto');
    assert.equal(await say(cache, [d.id], 'a tomato'), 'a tomahto');
    assert.equal(loads, 0, 'remembered at save: nothing loaded');

    // Another node replaces the items: the version differs, so this cache loads them.
    await repo.update(accountId, d.id, [{ word: 'tomato', pronunciation: 'red fruit' }]);
    assert.equal(await say(cache, [d.id], 'a tomato'), 'a red fruit');
    assert.equal(await say(cache, [d.id], 'a tomato'), 'a red fruit');
    assert.equal(loads, 1);
  });

  it("another account's id is missing, and so is a deleted dictionary", async () => {
    const cache = new PronunciationDictCache(repo, { maxBytes: 100_000 });
    const d = await repo.create(accountId, [{ word: 'x', pronunciation: 'y' }]);
    await cache.remember(d);
    const other = (await new AccountRepository(store.db).create('other')).id;
    assert.deepEqual((await cache.load(other, [d.id])).missing, [d.id]);
    await repo.delete(accountId, d.id);
    assert.deepEqual((await cache.load(accountId, [d.id])).missing, [d.id]);
  });

  it('holds at most maxBytes (estimated per entry): the least recently used dictionary is compiled again', async () => {
    // Two entries of two characters each: a little over 2 * 340 bytes per dictionary.
    const cache = new PronunciationDictCache(repo, { maxBytes: 1_000 });
    const a = await repo.create(accountId, [{ word: 'a', pronunciation: 'A' }, { word: 'b', pronunciation: 'B' }]);
    const c = await repo.create(accountId, [{ word: 'c', pronunciation: 'C' }, { word: 'd', pronunciation: 'D' }]);
    loads = 0;
    assert.equal(await say(cache, [a.id], 'a b'), 'A B');
    assert.equal(await say(cache, [c.id], 'c d'), 'C D'); // two dictionaries > 1,000 bytes: a goes
    assert.equal(await say(cache, [c.id], 'c d'), 'C D');
    assert.equal(loads, 2);
    assert.equal(await say(cache, [a.id, c.id], 'a c'), 'A C');
    assert.equal(loads, 3, 'a was evicted and loaded again');
  });

  it('refuses a request whose dictionaries hold more than maxEntriesPerRequest together, before compiling any', async () => {
    const cache = new PronunciationDictCache(repo, { maxBytes: 100_000, maxEntriesPerRequest: 3 });
    const a = await repo.create(accountId, [{ word: 'a', pronunciation: 'A' }, { word: 'b', pronunciation: 'B' }]);
    const c = await repo.create(accountId, [{ word: 'c', pronunciation: 'C' }, { word: 'd', pronunciation: 'D' }]);
    assert.equal(await say(cache, [a.id], 'a b'), 'A B');
    await assert.rejects(cache.load(accountId, [a.id, c.id]), /hold 4 entries together; one request may use at most 3/);
    assert.equal(cache.heldBytes, compiledBytes([{ word: 'a', pronunciation: 'A' }, { word: 'b', pronunciation: 'B' }]), 'c was never compiled');
  });
});
