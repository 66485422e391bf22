/**
 * What the shared (PostgreSQL) rate limit costs per request:
 *   PARLEY_BENCH_DATABASE_URL=postgres://… node --import tsx bench/rate-limit.ts
 * (falls back to PARLEY_TEST_DATABASE_URL). Works in a schema of its own, dropped at the end.
 *
 * 1. The statement alone (RateLimitRepository.take): sequential, one account; then 8 clients at once
 *    on one account (they queue on the bucket's row lock) and on 8 accounts.
 * 2. Through a real server on that database: GET /api/v1/tts-v2/get_voices (auth + rate limit, no
 *    other database work), with the limit on (shared buckets) and off; the difference is the
 *    cost a request pays for the shared limit.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { startServer } from '../src/server.js';
import { openStore } from '../src/store/database.js';
import { RateLimitRepository } from '../src/store/rate-limit-repository.js';

const baseUrl = process.env.PARLEY_BENCH_DATABASE_URL ?? process.env.PARLEY_TEST_DATABASE_URL;
if (!baseUrl) {
  console.error('Set PARLEY_BENCH_DATABASE_URL (or PARLEY_TEST_DATABASE_URL) to a postgres:// URL');
  process.exit(2);
}
const N = Number(process.env.BENCH_N ?? 2000);

function summary(label: string, ms: number[], wallMs?: number): void {
  const s = [...ms].sort((x, y) => x - y);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  const rate = wallMs ? `  ${Math.round((s.length / wallMs) * 1000)} req/s` : '';
  console.log(`${label.padEnd(46)} mean ${(mean * 1000).toFixed(0).padStart(5)} µs  p50 ${(at(0.5) * 1000).toFixed(0).padStart(5)} µs  p99 ${(at(0.99) * 1000).toFixed(0).padStart(6)} µs${rate}`);
}

async function timed(n: number, concurrency: number, once: (i: number) => Promise<unknown>): Promise<{ ms: number[]; wallMs: number }> {
  const ms: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        const t0 = performance.now();
        await once(i);
        ms.push(performance.now() - t0);
      }
    }),
  );
  return { ms, wallMs: performance.now() - started };
}

const schema = `bench_rl_${Date.now()}_${process.pid}`;
const admin = new pg.Client({ connectionString: baseUrl });
await admin.connect();
await admin.query(`create schema ${schema}`);
const url = new URL(baseUrl);
url.searchParams.set('options', `-c search_path=${schema}`);
const databaseUrl = url.toString();
try {
  const store = await openStore({ databaseUrl, dataDir: '' });
  const buckets = new RateLimitRepository(store.db);
  const big = 1e9; // never refuses: every call takes the token path
  await timed(200, 1, () => buckets.take('warm', big, big));
  const seq = await timed(N, 1, () => buckets.take('acct:one', big, big));
  summary('take(), sequential, one account', seq.ms, seq.wallMs);
  const same = await timed(N, 8, () => buckets.take('acct:hot', big, big));
  summary('take(), 8 at once, one account', same.ms, same.wallMs);
  const spread = await timed(N, 8, (i) => buckets.take(`acct:${i % 8}`, big, big));
  summary('take(), 8 at once, 8 accounts', spread.ms, spread.wallMs);
  await store.close();

  // Both servers at once, measured in alternating blocks, so load from elsewhere hits both alike.
  const servers = await Promise.all(
    [false, true].map(async (limited) => {
      const config = loadConfig({}, {
        port: 0,
        host: '127.0.0.1',
        databaseUrl,
        dataDir: mkdtempSync(path.join(tmpdir(), 'parley-bench-')),
        logLevel: 'warn',
        rateLimits: { management: { perMinute: limited ? 1e9 : 0, burst: 1e9 } },
      });
      const server = await startServer(config, { logger: false, engines: false });
      const { key } = await server.storage.apiKeys.create({ name: 'bench' });
      const get = async () => {
        const r = await fetch(`${server.url}/api/v1/tts-v2/get_voices`, { headers: { authorization: `Bearer ${key}` } });
        if (r.status !== 200) throw new Error(`HTTP ${r.status}`);
        await r.arrayBuffer();
      };
      return { limited, server, get, ms: [] as number[], wallMs: 0 };
    }),
  );
  for (const s of servers) await timed(200, 1, s.get);
  const BLOCK = 100;
  for (let done = 0; done < N; done += BLOCK) {
    for (const s of servers) {
      const r = await timed(BLOCK, 1, s.get);
      s.ms.push(...r.ms);
      s.wallMs += r.wallMs;
    }
  }
  for (const s of servers) {
    summary(`HTTP get_voices, sequential, limit ${s.limited ? 'on (shared)' : 'off'}`, s.ms, s.wallMs);
    await s.server.close();
  }
} finally {
  await admin.query(`drop schema ${schema} cascade`);
  await admin.end();
}
