/**
 * Graceful node shutdown: close() stops claiming, gives a running transcription back to the queue
 * at once (unlocked, so another node takes it without waiting for the lock to go stale), lets a
 * webhook delivery in flight finish and records it, and reports not ready meanwhile.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JobService } from '../../src/jobs/job-service.js';
import { openStore } from '../../src/store/database.js';
import type { Transcribe } from '../../src/transcription/types.js';
import { startTestServer } from '../helpers/server.js';
import { plainOptions as options, silentLog as silent, until } from './fixtures/job-options.js';
import { startReceiver } from './fixtures/receiver.js';
import { makeWav, wavTranscribe } from './fixtures/wav-transcribe.js';


describe('graceful node shutdown', () => {
  it('gives back a running transcription, finishes a delivery in flight, then closes', async () => {
    const receiver = await startReceiver();
    const inner = wavTranscribe();
    // "slow" transcribes until aborted; "quick" at once.
    const transcribe: Transcribe = (input, opts, context) =>
      context.requestId === 'slow'
        ? new Promise((_, reject) => context.signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true }))
        : inner(input, opts, context);
    let jobs!: JobService;
    const s = await startTestServer({
      config: { webhooks: { pollMs: 20, concurrency: 2 } },
      transcribe, jobs: { log: silent },
    });
    jobs = s.server.jobs!.service;
    const { db } = s.server.storage.store;
    const row = (requestId: string) => db.selectFrom('jobs').select(['state', 'locked_by', 'attempts']).where('request_id', '=', requestId).executeTakeFirstOrThrow();
    let closed = false;
    try {
      const submit = (requestId: string) =>
        jobs.submit({ accountId: s.accountId, requestId, input: { bytes: makeWav(0.2), contentType: 'audio/wav' }, options, webhookUrl: receiver.url, webhookExtra: {} });
      receiver.hold();
      await submit('slow');
      await submit('quick');
      await until('the delivery of "quick" to reach the receiver', () => receiver.forRequest('quick').length === 1);
      assert.equal((await row('slow')).state, 'running');
      assert.equal((await fetch(`${s.url}/readyz`)).status, 200);

      const closing = s.close().then(() => (closed = true));
      // The delivery is still unanswered: the node waits for it, and is no longer ready.
      await until('"slow" to be given back', async () => (await row('slow')).state === 'queued');
      assert.deepEqual(await row('slow'), { state: 'queued', locked_by: null, attempts: 0 }, 'unlocked at once: any node may take it');
      assert.equal(closed, false, 'still finishing the delivery');
      assert.equal((await fetch(`${s.url}/readyz`)).status, 503, 'not ready while shutting down');
      receiver.release();
      await closing;
      assert.equal(receiver.forRequest('quick')[0]?.answered, 200);
    } finally {
      receiver.release();
      if (!closed) await s.close();
      await receiver.close();
    }
    // Read after close through a fresh store on the same file: the delivery was recorded.
    const store = await openStore({ databaseUrl: '', dataDir: s.config.dataDir });
    try {
      const quick = await store.db.selectFrom('jobs').select(['state', 'locked_by', 'attempts']).where('request_id', '=', 'quick').executeTakeFirstOrThrow();
      assert.deepEqual(quick, { state: 'succeeded', locked_by: null, attempts: 1 });
    } finally {
      await store.close();
    }
  });
});
