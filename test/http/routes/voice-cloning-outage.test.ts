/**
 * A clone accepted just before a database outage: its engine is prepared after the response, and
 * the write of its outcome meets the outage. Once the database is back the clone must end
 * `completed` (or `failed` with a reason), as a client listing its voices sees it; it must not stay
 * `processing` for ever.
 * The outage is real: a PostgreSQL cluster of the test's own, stopped with `pg_ctl stop -m fast`
 * while the outcome's UPDATE is in the database. So that the stop lands on that very statement, a
 * trigger of the test holds UPDATEs of cloned_voices (pg_sleep) while its hold table has a row;
 * the test stops the database once it sees the held statement, and lifts the hold once it is back.
 * The server is the job-server fixture in a child process, with its engines (eSpeak NG, the VAD).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { randomBase62 } from '../../../src/store/ids.js';
import { corpusFile, modelsDirWith, needs, REAL_TEST_MODELS } from '../../helpers/models.js';
import { skipWithoutPgServer, startPgCluster, type PgCluster } from '../../helpers/pg-cluster.js';
import { until } from '../../jobs/fixtures/job-options.js';
import { womanSample } from './voice-cloning-helpers.js';
import { startJobServer, type JobServerChild } from '../../jobs/fixtures/start-job-server.js';

const OUTAGE_MS = 3_000;
const SETTLE_LIMIT_MS = 30_000;

type Node = JobServerChild;

function startNode(env: NodeJS.ProcessEnv): Promise<Node> {
  return startJobServer(env, { timeoutMs: 90_000 });
}

async function sql(url: string, text: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

describe('a voice clone and a database outage', { skip: skipWithoutPgServer || needs({ models: [REAL_TEST_MODELS.VAD], corpus: true }) }, () => {
  let cluster: PgCluster;
  before(async () => {
    cluster = await startPgCluster();
  });
  after(async () => {
    await cluster?.destroy();
  });

  it('a clone whose outcome met the outage is recorded completed once the database is back', { timeout: 180_000 }, async (t) => {
    const databaseUrl = await cluster.createDatabase('clone_outage');
    const dataDir = mkdtempSync(path.join(tmpdir(), 'parley-clone-outage-'));
    const key = `sk_${randomBase62(40)}`;
    const node = await startNode({
      ...process.env,
      DATABASE_URL: databaseUrl,
      PARLEY_DATA_DIR: dataDir,
      PARLEY_MODELS_DIR: modelsDirWith([REAL_TEST_MODELS.VAD]),
      PARLEY_API_KEY: key,
      PARLEY_LOG_LEVEL: 'warn',
      FIXTURE_ENGINES: '1',
      PARLEY_DATABASE__PROBE_MAX_INTERVAL_MS: '1000',
    });
    const auth = { authorization: `Bearer ${key}` };
    try {
      // The server has migrated the schema: the hold goes on its table.
      await sql(
        databaseUrl,
        `create table clone_outcome_hold (held boolean);
         insert into clone_outcome_hold values (true);
         create function hold_clone_outcome() returns trigger language plpgsql as $$
           begin
             if exists (select 1 from clone_outcome_hold) then perform pg_sleep(30); end if;
             return new;
           end $$;
         create trigger hold_clone_outcome before update on cloned_voices for each row execute function hold_clone_outcome();`,
      );

      const rel = womanSample();
      const form = new FormData();
      form.append('displayName', 'Outage');
      form.append('file', new Blob([readFileSync(corpusFile(rel))], { type: 'audio/wav' }), path.basename(rel));
      const res = await fetch(`${node.url}/api/v1/tts-large/add_voice`, { method: 'POST', headers: auth, body: form });
      const body = (await res.json()) as { data: { voiceId: string; status: string } };
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.equal(body.data.status, 'processing');
      const { voiceId } = body.data;

      // The outcome's UPDATE is in the database, held by the trigger: stop the database under it.
      await until(
        'the outcome being written',
        async () => (await sql(databaseUrl, `select 1 from pg_stat_activity where query ilike 'update "cloned_voices"%' and wait_event = 'PgSleep'`)).rowCount! > 0,
        60_000,
      );
      await cluster.stopFast();
      await new Promise((r) => setTimeout(r, OUTAGE_MS));
      assert.equal((await fetch(`${node.url}/readyz`)).status, 503, 'not ready during the outage');
      await cluster.start();
      await sql(databaseUrl, 'delete from clone_outcome_hold');
      const upAt = Date.now();

      // What the client sees: the clone in its listing, polled until it is no longer processing.
      let status = 'unknown';
      let error: string | null = null;
      while (Date.now() - upAt < SETTLE_LIMIT_MS) {
        const listed = await fetch(`${node.url}/api/v1/tts-large/get_cloned_voices`, { headers: auth });
        if (listed.status === 200) {
          const voice = ((await listed.json()) as { voices: Array<{ voiceId: string; status: string; error?: string | null }> }).voices.find((v) => v.voiceId === voiceId);
          assert.ok(voice, `${voiceId} is listed`);
          ({ status } = voice);
          error = voice.error ?? null;
          if (status !== 'processing') break;
        }
        await new Promise((r) => setTimeout(r, 250));
      }
      const settledMs = Date.now() - upAt;
      t.diagnostic(`the clone ${settledMs >= SETTLE_LIMIT_MS ? `is still ${status} ${SETTLE_LIMIT_MS / 1000} s` : `is ${status} ${(settledMs / 1000).toFixed(1)} s`} after the database returned${error ? ` (${error})` : ''}`);
      assert.equal(status, 'completed', `the outcome is recorded; logs: ${node.logs().slice(-3000)}`);
      assert.equal(node.child.exitCode, null, 'the server is up');
    } finally {
      if (node.child.exitCode === null && node.child.signalCode === null) {
        const exited = new Promise((r) => node.child.once('exit', r));
        node.child.kill('SIGTERM');
        const kill = setTimeout(() => node.child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(kill);
      }
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
