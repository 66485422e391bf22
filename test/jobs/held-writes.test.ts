/**
 * Job changes the database cannot take are held, not lost: a delivery the receiver acknowledged
 * while the database refused writes is recorded once it takes them again (and never sent twice),
 * and a transcription finished meanwhile keeps its result until it can be stored. SQLite's
 * query_only switch stands for a database that refuses writes (a read-only file or standby).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import type { Transcribe } from '../../src/transcription/types.js';
import { startTestServer } from '../helpers/server.js';
import { plainOptions as options, silentLog as silent, until } from './fixtures/job-options.js';
import { startReceiver } from './fixtures/receiver.js';
import { makeWav, wavTranscribe } from './fixtures/wav-transcribe.js';

describe('job changes held through a database outage', () => {
  it('a result over maxHeldResultBytes is not kept: its job is given back, transcribed again and delivered once', async () => {
    const receiver = await startReceiver();
    const inner = wavTranscribe();
    let runs = 0;
    let openGate!: () => void;
    const gate = new Promise<void>((r) => (openGate = r));
    const transcribe: Transcribe = async (input, opts, context) => {
      runs++;
      await gate;
      return inner(input, opts, context);
    };
    const s = await startTestServer({
      config: { webhooks: { pollMs: 20, concurrency: 1, maxHeldResultBytes: 10 }, database: { probeMaxIntervalMs: 200 } },
      transcribe,
      jobs: { log: silent },
    });
    const jobs = s.server.jobs!.service;
    const { db } = s.server.storage.store;
    const held: string[] = [];
    jobs.events.on('job:held', (e) => held.push(`${e.requestId}: ${e.what}`));
    try {
      await jobs.submit({ accountId: s.accountId, requestId: 'big', input: { bytes: makeWav(0.2), contentType: 'audio/wav' }, options, webhookUrl: receiver.url, webhookExtra: {} });
      await until('"big" transcribing', () => runs === 1);
      await sql`pragma query_only = on`.execute(db);
      openGate();
      await until('the job given back instead', () => held.length === 1);
      assert.deepEqual(held, ['big: give back']);
      await sql`pragma query_only = off`.execute(db);
      await until('"big" delivered', () => receiver.forRequest('big').length === 1, 10_000);
      assert.equal(runs, 2, 'transcribed again');
      assert.equal(receiver.forRequest('big')[0]!.json.status, 'success');
    } finally {
      await s.close();
      await receiver.close();
    }
  });

  it('records an acknowledged delivery and a finished transcription once the database takes writes again', async () => {
    const receiver = await startReceiver();
    const inner = wavTranscribe();
    let openGate!: () => void;
    const gate = new Promise<void>((r) => (openGate = r));
    // "late" finishes its transcription only when the test says so; the others at once.
    const transcribe: Transcribe = async (input, opts, context) => {
      if (context.requestId === 'late') await gate;
      return inner(input, opts, context);
    };
    const s = await startTestServer({
      config: { webhooks: { pollMs: 20, concurrency: 2 }, database: { probeMaxIntervalMs: 200 } },
      transcribe,
      jobs: { log: silent },
    });
    const jobs = s.server.jobs!.service;
    const { db } = s.server.storage.store;
    const row = (requestId: string) => db.selectFrom('jobs').select(['state', 'locked_by', 'attempts']).where('request_id', '=', requestId).executeTakeFirstOrThrow();
    const held: string[] = [];
    jobs.events.on('job:held', (e) => held.push(`${e.requestId}: ${e.what}`));
    const submit = (requestId: string) =>
      jobs.submit({ accountId: s.accountId, requestId, input: { bytes: makeWav(0.2), contentType: 'audio/wav' }, options, webhookUrl: receiver.url, webhookExtra: {} });
    try {
      receiver.hold();
      await submit('acked');
      await submit('late');
      await until('the delivery of "acked" waiting at the receiver', () => receiver.received.length === 1);
      await until('"late" transcribing', async () => (await row('late')).state === 'running');

      await sql`pragma query_only = on`.execute(db);
      receiver.release(); // "acked" is acknowledged now; recording it fails
      openGate(); // "late" is transcribed now; storing the result fails
      await until('both changes held', () => held.length === 2);
      assert.deepEqual(held.sort(), ['acked: acknowledged delivery', 'late: transcription result']);
      assert.equal((await fetch(`${s.url}/readyz`)).status, 503, 'not ready while writes fail');
      // Still locked by this node, so no node takes them up again meanwhile.
      for (const id of ['acked', 'late']) assert.notEqual((await row(id)).locked_by, null, id);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(receiver.received.length, 1, 'nothing is sent again while the database refuses writes');

      await sql`pragma query_only = off`.execute(db);
      await until('"acked" recorded', async () => (await row('acked')).state === 'succeeded', 10_000);
      await until('"late" delivered', async () => (await row('late')).state === 'succeeded', 10_000);
      assert.deepEqual(receiver.forRequest('acked').map((r) => r.answered), [200], '"acked" was sent once');
      assert.deepEqual(receiver.forRequest('late').map((r) => r.answered), [200]);
      assert.equal(receiver.forRequest('late')[0]!.json.status, 'success');
      assert.equal((await row('acked')).attempts, 1);
      assert.equal((await fetch(`${s.url}/readyz`)).status, 200);
    } finally {
      await s.close();
      await receiver.close();
    }
  });
});
