/**
 * Socket slots on each backend: concurrent takes for one account never pass its limit (on
 * PostgreSQL through two connection pools, as two nodes), a released or expired slot is free
 * again, renewal keeps a node's slots, and a node's slots go with it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { openStore, type Store } from '../../src/store/database.js';
import { SocketSlotRepository } from '../../src/store/socket-slot-repository.js';
import { skipWithoutPg, withPgSchema } from '../helpers/pg-schema.js';

const MAX = 5;
const TAKERS = 40;

async function rows(store: Store, node?: string): Promise<number> {
  const where = node === undefined ? sql`true` : sql`node = ${node}`;
  return Number((await sql<{ n: string | number }>`select count(*) as n from socket_slots where ${where}`.execute(store.db)).rows[0]!.n);
}

/** `nodes` are repositories over separate connections to one database. */
async function exercise(store: Store, nodes: SocketSlotRepository[]): Promise<void> {
  const slot = (i: number, accountId = 'acct_a') => ({ id: `s${i}`, accountId, kind: 'synthesis' });
  // Many at once, spread over the nodes: exactly MAX are taken.
  const taken = await Promise.all(Array.from({ length: TAKERS }, (_, i) => nodes[i % nodes.length]!.take(slot(i), `node${i % nodes.length}`, MAX, 60_000)));
  assert.equal(taken.filter(Boolean).length, MAX);
  assert.equal(await rows(store), MAX);
  // Another account has slots of its own.
  assert.equal(await nodes[0]!.take(slot(100, 'acct_b'), 'other', MAX, 60_000), true);

  // A released slot is free again, for any node.
  const holder = taken.findIndex(Boolean);
  await nodes[0]!.release(`s${holder}`);
  assert.equal(await nodes.at(-1)!.take(slot(101), 'node1', MAX, 60_000), true);
  assert.equal(await nodes[0]!.take(slot(102), 'node0', MAX, 60_000), false);

  // Slots that expired (their node stopped renewing) no longer count; renewal keeps a node's slots.
  await nodes[0]!.releaseNode('node0');
  await nodes[0]!.releaseNode('node1');
  await nodes[0]!.take(slot(200), 'dead', MAX, 200);
  await nodes[0]!.take(slot(201), 'alive', MAX, 200);
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(await nodes[0]!.renew('alive', 200), 1);
  }
  // 300 ms after the dead node's last promise of 200 ms: its slot was dropped by the renewals' sweep.
  assert.equal(await rows(store, 'dead'), 0);
  assert.equal(await rows(store, 'alive'), 1);
  const refill = await Promise.all(Array.from({ length: MAX }, (_, i) => nodes[0]!.take(slot(300 + i), 'node0', MAX, 60_000)));
  assert.deepEqual(refill.filter(Boolean).length, MAX - 1, 'the live node\'s slot still counts');
  await nodes[0]!.releaseNode('node0');
  await nodes[0]!.releaseNode('alive');
  assert.equal(await rows(store), 1, 'only acct_b\'s slot is left');
}

describe('socket slots', () => {
  it('hold an account\'s limit on SQLite', async () => {
    const store = await openStore({ databaseUrl: '', dataDir: mkdtempSync(path.join(tmpdir(), 'parley-slots-')) });
    try {
      await exercise(store, [new SocketSlotRepository(store.db, store.backend)]);
    } finally {
      await store.close();
    }
  });

  it('hold an account\'s limit on PostgreSQL across two connection pools', { skip: skipWithoutPg }, () =>
    withPgSchema('socket_slot_repo', async (databaseUrl) => {
      const first = await openStore({ databaseUrl, dataDir: '' });
      const second = await openStore({ databaseUrl, dataDir: '' });
      try {
        await exercise(first, [new SocketSlotRepository(first.db, first.backend), new SocketSlotRepository(second.db, second.backend)]);
      } finally {
        await Promise.all([first.close(), second.close()]);
      }
    }),
  );
});
