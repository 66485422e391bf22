/**
 * Keys through a database outage: a key verified within auth.keyOutageGraceMs still works while
 * the database cannot be asked (so synthesis goes on), answered from memory without a lookup; a
 * key not verified before, or verified too long ago, gets the database's 503, never a 401.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiKeyService, KEY_ROLES } from '../../src/accounts/api-keys.js';
import type { AccountRepository } from '../../src/store/account-repository.js';
import type { ApiKeyRepository, ApiKeyRow } from '../../src/store/api-key-repository.js';
import { DatabaseUnavailableError } from '../../src/store/availability.js';

function fixture(options: { ttlMs: number; graceMs: number }) {
  const rows: ApiKeyRow[] = [];
  let down = false;
  let lookups = 0;
  let now = 1_000_000;
  const outage = () => new DatabaseUnavailableError({ scope: 'connection', reason: 'ECONNREFUSED' }, 2);
  const keys = {
    insert: async (row: ApiKeyRow) => void rows.push(row),
    findActiveByPrefix: async (prefix: string) => {
      lookups++;
      if (down) throw outage();
      return rows.filter((r) => r.prefix === prefix && r.revoked_at === null);
    },
  } as unknown as ApiKeyRepository;
  const accounts = { create: async (name: string) => ({ id: `acct_${name}`, name, webhook_secret: 's', created_at: '' }) } as unknown as AccountRepository;
  const service = new ApiKeyService(keys, accounts, {
    cacheTtlMs: options.ttlMs,
    outageGraceMs: options.graceMs,
    databaseAvailable: () => !down,
    clock: () => now,
  });
  return {
    service,
    setDown: (value: boolean) => void (down = value),
    advance: (ms: number) => void (now += ms),
    lookups: () => lookups,
  };
}

describe('API keys during a database outage', () => {
  it('a key verified within the grace still works, from memory; after the grace it gets 503', async () => {
    const f = fixture({ ttlMs: 5_000, graceMs: 60_000 });
    const { key } = await f.service.create({ name: 'a', role: KEY_ROLES.user });
    const verified = await f.service.authenticate(key);
    assert.equal(verified?.accountId, 'acct_a');

    f.setDown(true);
    f.advance(30_000); // past the cache TTL, within the grace
    const before = f.lookups();
    assert.deepEqual(f.service.cachedKey(key), verified, 'answered from memory, so it costs no unauthenticated-bucket token');
    assert.deepEqual(await f.service.authenticate(key), verified);
    assert.equal(f.lookups(), before, 'no lookup while the database is known to be away');

    f.advance(31_000); // past the grace
    await assert.rejects(f.service.authenticate(key), DatabaseUnavailableError);

    f.setDown(false);
    assert.deepEqual(await f.service.authenticate(key), verified, 'and looked up again once the database is back');
  });

  it('a key never verified gets 503 during an outage, not 401; with the database up, the grace changes nothing', async () => {
    const f = fixture({ ttlMs: 5_000, graceMs: 60_000 });
    const { key } = await f.service.create({ name: 'b' });
    f.setDown(true);
    await assert.rejects(f.service.authenticate(key), DatabaseUnavailableError);
    assert.equal(f.service.cachedKey(key), undefined);

    f.setDown(false);
    await f.service.authenticate(key);
    f.advance(30_000);
    // Past the TTL with the database up: looked up again (a revocation elsewhere takes effect).
    const before = f.lookups();
    assert.equal(f.service.cachedKey(key), undefined);
    await f.service.authenticate(key);
    assert.equal(f.lookups(), before + 1);
  });

  it('with no grace, a kept key is not used', async () => {
    const f = fixture({ ttlMs: 5_000, graceMs: 0 });
    const { key } = await f.service.create({ name: 'c' });
    await f.service.authenticate(key);
    f.setDown(true);
    f.advance(6_000);
    await assert.rejects(f.service.authenticate(key), DatabaseUnavailableError);
  });
});
