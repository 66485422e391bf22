/**
 * What a request without a valid key may cost: key lookups are remembered for auth.keyCacheTtlMs
 * (found or not), and every request not authenticated from that cache takes a token from its
 * address's bucket (rateLimits.unauthenticated) before any database work.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { ApiKeyService } from '../../../src/accounts/api-keys.js';
import { AccountRepository } from '../../../src/store/account-repository.js';
import { ApiKeyRepository } from '../../../src/store/api-key-repository.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';

const randomKey = () => `sk_${randomBytes(30).toString('hex').slice(0, 40)}`;

/** Counts the key lookups that reach the database, in every server of this file. */
let lookups = 0;
const original = ApiKeyRepository.prototype.findActiveByPrefix;
before(() => {
  ApiKeyRepository.prototype.findActiveByPrefix = function (prefix: string) {
    lookups++;
    return original.call(this, prefix);
  };
});
after(() => {
  ApiKeyRepository.prototype.findActiveByPrefix = original;
});

describe('per-address limit on unauthenticated requests', () => {
  let s: TestServer;
  beforeEach(async () => {
    s = await startTestServer({ config: { rateLimits: { unauthenticated: { perMinute: 60, burst: 3 } } } });
  });
  afterEach(() => s.close());

  it('wrong keys cost one database lookup each until the bucket is empty, then 429 with no lookup', async () => {
    // The valid key's first lookup takes one of the 3 tokens; from then on it is remembered.
    const known = await s.api('/api/v1/tts-v2/get_voices');
    assert.equal(known.status, 200);
    lookups = 0;
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await fetch(`${s.url}/api/v1/tts-v2/get_voices`, { headers: { authorization: `Bearer ${randomKey()}` } });
      statuses.push(r.status);
      const body = await r.json();
      if (r.status === 429) {
        assert.deepEqual(body, { error: 'TooManyRequests', message: 'Rate limit exceeded. Please try again later.' });
        assert.ok(Number(r.headers.get('retry-after')) >= 1);
      } else {
        assert.equal(body.error, 'Unauthorized');
      }
    }
    assert.deepEqual(statuses, [401, 401, 429, 429, 429, 429, 429, 429, 429, 429]);
    assert.equal(lookups, 2, 'database lookups: only what the bucket allowed');

    const stt = await fetch(`${s.url}/api/v1/stt/get_text`, { method: 'POST', headers: { 'content-type': 'audio/wav' }, body: new Uint8Array(4) });
    assert.equal(stt.status, 429);
    assert.deepEqual(Object.keys(await stt.json()).sort(), ['error', 'request_id']);

    const still = await s.api('/api/v1/tts-v2/get_voices');
    assert.equal(still.status, 200, 'a remembered valid key from the same address still works');
    assert.equal(lookups, 2);
  });

  it('requests without a key or with a malformed one take tokens too, without any lookup', async () => {
    lookups = 0;
    const headers: Record<string, string>[] = [{}, { authorization: 'Basic abc' }, { authorization: 'Bearer not-a-key' }, {}];
    const statuses = [];
    for (const h of headers) statuses.push((await fetch(`${s.url}/api/v1/tts-v2/get_voices`, { headers: h })).status);
    assert.deepEqual(statuses, [401, 401, 401, 429]);
    assert.equal(lookups, 0);
  });

  it('the same wrong key is looked up once and then remembered as invalid', async () => {
    lookups = 0;
    const key = randomKey();
    for (let i = 0; i < 3; i++) {
      const r = await fetch(`${s.url}/api/v1/tts-v2/get_voices`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(r.status, 401);
    }
    assert.equal(lookups, 1);
  });
});

describe('key lookup cache', () => {
  const keyCacheTtlMs = 400;
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ config: { auth: { keyCacheTtlMs } } });
  });
  after(() => s.close());

  it('a valid key is looked up once per TTL', async () => {
    const created = await s.server.storage.apiKeys.create({ name: 'cached' });
    lookups = 0;
    for (let i = 0; i < 5; i++) {
      const r = await fetch(`${s.url}/api/v1/tts-v2/get_voices`, { headers: { authorization: `Bearer ${created.key}` } });
      assert.equal(r.status, 200);
    }
    assert.equal(lookups, 1);
  });

  it('a key revoked by another process (the CLI, another node) stops working within the TTL', async () => {
    const created = await s.server.storage.apiKeys.create({ name: 'to-revoke' });
    const call = () => fetch(`${s.url}/api/v1/tts-v2/get_voices`, { headers: { authorization: `Bearer ${created.key}` } });
    assert.equal((await call()).status, 200);
    // Another service on the same database, as `parley keys revoke` has: this server's cache is not told.
    const { db } = s.server.storage.store;
    const elsewhere = new ApiKeyService(new ApiKeyRepository(db), new AccountRepository(db));
    assert.equal(await elsewhere.revoke(created.row.id), true);
    const revokedAt = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - revokedAt < keyCacheTtlMs + 2_000) {
      status = (await call()).status;
      await new Promise((r) => setTimeout(r, 25));
    }
    assert.equal(status, 401, 'refused once the remembered lookup expired');
  });

  it('a key revoked through this process is refused at once', async () => {
    const created = await s.server.storage.apiKeys.create({ name: 'revoked-here' });
    const call = () => fetch(`${s.url}/api/v1/tts-v2/get_voices`, { headers: { authorization: `Bearer ${created.key}` } });
    assert.equal((await call()).status, 200);
    await s.server.storage.apiKeys.revoke(created.row.id);
    assert.equal((await call()).status, 401);
  });
});
