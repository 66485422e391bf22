/**
 * Sockets per account across nodes: two servers on one PostgreSQL database share each account's
 * realtime.maxSocketsPerAccount. A socket over the limit on either node is closed with 1008; a
 * socket closed on one node frees its slot for the other; the slots of a node that died (it stopped
 * renewing them) are free once they expire; a server that closes frees its slots. While the
 * database cannot answer, the node's own count still bounds an account.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { SharedSocketSlots } from '../../src/store/socket-slots.js';
import { openStore, type Store } from '../../src/store/database.js';
import { skipWithoutPg, withPgSchema } from '../helpers/pg-schema.js';
import { until } from '../jobs/fixtures/job-options.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { connect, TestSocket, wsUrl } from '../helpers/websocket.js';

const MAX = 2;
/** Short, so the test outlives several renewals and a dead node's slots expire soon. */
const LEASE_MS = 600;

async function readiness(s: TestServer): Promise<any> {
  return (await (await s.api('/readyz')).json()).realtime.detail;
}

/** A synthesis socket on `s` with `key`; resolves once the server has admitted it (a request completes) or closed it. */
async function openOn(s: TestServer, key: string): Promise<TestSocket> {
  const socket = await connect(wsUrl(s.url, '/api/v1/tts-v2/get_speech/stream'), { authorization: `Bearer ${key}` });
  socket.send({ voice_id: 'espeak-en-us-female', text: 'Hi.', request_id: 'probe' });
  await socket.until((all) => all.some((m) => m.status === 'complete')).catch(() => undefined);
  return socket;
}

function assertAdmitted(socket: TestSocket): void {
  assert.equal(socket.closed, undefined, `closed: ${JSON.stringify(socket.closed)}`);
  assert.ok(socket.messages.some((m) => m.status === 'complete'));
}

function assertRefused(socket: TestSocket): void {
  assert.deepEqual(socket.closed, { code: 1008, reason: `too many open sockets for this account (at most ${MAX})` });
}

async function slotRows(store: Store, where = sql`true`): Promise<number> {
  return Number((await sql<{ n: string }>`select count(*) as n from socket_slots where ${where}`.execute(store.db)).rows[0]!.n);
}

describe('sockets per account on two nodes sharing PostgreSQL', { skip: skipWithoutPg, timeout: 120_000 }, () => {
  let a: TestServer;
  let b: TestServer;
  let store: Store;
  let release: () => void;
  let dropped: Promise<void>;

  before(async () => {
    // The schema lives until after() lets withPgSchema return and drop it.
    const ready = new Promise<string>((resolveUrl) => {
      dropped = withPgSchema('socket_slots', (url) => {
        resolveUrl(url);
        return new Promise<void>((r) => (release = r));
      });
    });
    // A schema that could not be made ends withPgSchema early, with its error.
    const databaseUrl = await Promise.race([ready, dropped!.then(() => Promise.reject(new Error('withPgSchema ended early')))]);
    const config = { databaseUrl, logLevel: 'warn' as const, realtime: { maxSocketsPerAccount: MAX, socketLeaseMs: LEASE_MS } };
    a = await startTestServer({ engines: true, config });
    b = await startTestServer({ engines: true, config });
    store = await openStore({ databaseUrl, dataDir: '' });
  });

  after(async () => {
    await Promise.allSettled([a?.close(), b?.close(), store?.close()]);
    release?.();
    await dropped;
  });

  it('refuses on node B a socket of an account whose slots node A holds, and admits one once A closes one', async () => {
    const key = a.key; // one account, used on both nodes
    const onA = [await openOn(a, key), await openOn(a, key)];
    onA.forEach(assertAdmitted);
    const hitsBefore = (await readiness(b)).limitHits.socketsPerAccount;
    assertRefused(await openOn(b, key));
    assert.equal((await readiness(b)).limitHits.socketsPerAccount, hitsBefore + 1, 'counted in B\'s readiness report');

    // Several leases long: A renews its slots, so they still count.
    await new Promise((r) => setTimeout(r, 3 * LEASE_MS));
    assertRefused(await openOn(b, key));

    onA[0]!.close();
    await until('the closed socket\'s slot to be freed', async () => (await slotRows(store)) === 1);
    const onB = await openOn(b, key);
    assertAdmitted(onB);
    assertRefused(await openOn(a, key));

    for (const socket of [onA[1]!, onB]) socket.close();
    await until('every slot to be freed', async () => (await slotRows(store)) === 0);
  });

  it('frees the slots of a node that stopped renewing them once they expire, and only then', async () => {
    const key = b.key;
    const accountId = b.accountId;
    // What a node that died leaves: slots it last promised to renew within a second.
    const expires = new Date(Date.now() + 1_000).toISOString();
    for (const id of ['dead-1', 'dead-2']) {
      await store.db
        .insertInto('socket_slots')
        .values({ id, account_id: accountId, node: 'dead-node', kind: 'synthesis', opened_at: new Date().toISOString(), expires_at: expires })
        .execute();
    }
    assertRefused(await openOn(b, key));
    await until('the dead node\'s slots to expire', async () => Date.now() > Date.parse(expires) + 50);
    const sockets = [await openOn(b, key), await openOn(a, key)];
    sockets.forEach(assertAdmitted);
    assert.equal(await slotRows(store, sql`node = 'dead-node'`), 0, 'the expired slots are gone');
    for (const socket of sockets) socket.close();
    await until('every slot to be freed', async () => (await slotRows(store)) === 0);
  });

  it('frees a node\'s slots when the server closes', async () => {
    const socket = await openOn(a, a.key);
    assertAdmitted(socket);
    const node = a.server.storage.nodeId;
    assert.equal(await slotRows(store, sql`node = ${node}`), 1);
    await a.close();
    assert.equal(await slotRows(store, sql`node = ${node}`), 0);
    socket.close();
  });
});

describe('socket slots while the database cannot answer', () => {
  const slot = (id: string) => ({ id, accountId: 'acct', kind: 'synthesis' });

  it('bound an account by this node\'s count, and report each error', async () => {
    const errors: unknown[] = [];
    const refused = async () => {
      throw new Error('connection refused');
    };
    const slots = new SharedSocketSlots({ take: refused, release: refused, renew: refused, releaseNode: refused }, 'node', LEASE_MS, (err) => errors.push(err));
    try {
      assert.deepEqual([await slots.take(slot('a'), MAX), await slots.take(slot('b'), MAX), await slots.take(slot('c'), MAX)], [true, true, false]);
      assert.equal(errors.length, 2, 'each failed take is reported');
      slots.release('a');
      assert.equal(await slots.take(slot('d'), MAX), true, 'a released slot is free on this node at once');
    } finally {
      await slots.close();
    }
  });

  it('retry a release that failed at the next renewal', async () => {
    const errors: unknown[] = [];
    const released: string[] = [];
    let releaseFails = true;
    const table = {
      take: async () => true,
      release: async (id: string) => {
        if (releaseFails) throw new Error('connection refused');
        released.push(id);
      },
      renew: async () => 0,
      releaseNode: async () => undefined,
    };
    const slots = new SharedSocketSlots(table, 'node', LEASE_MS, (err) => errors.push(err));
    try {
      assert.equal(await slots.take(slot('a'), MAX), true);
      slots.release('a');
      await until('the failed release to be reported', async () => errors.length === 1);
      releaseFails = false;
      await until('the release to be retried', async () => released.length === 1);
      assert.deepEqual(released, ['a']);
    } finally {
      await slots.close();
    }
  });
});
