/**
 * A first start from a fresh data dir, timed: `node --import tsx bench/first-run.ts`. Prints
 * numbers and ratios; asserts nothing.
 *
 * The server is what `parley serve` starts (startServer with firstRun, config from the defaults),
 * in this process, with an empty models dir. The "network" is a loopback HTTP server serving the
 * VAD as an npm package tarball and the tiny streaming English recogniser as a release archive
 * (the catalogue's entries with their checksums). Measured: start → /readyz 200 (speech served),
 * start → both packs installed and loaded, start → the first transcript of a corpus WAV.
 *
 * Env: PARLEY_TEST_MODELS_DIR, PARLEY_TEST_CORPUS_DIR.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KEY_ROLES } from '../src/accounts/api-keys.js';
import { loadConfig } from '../src/config.js';
import { findCatalogueEntry } from '../src/models/catalogue.js';
import { buildServer } from '../src/server.js';
import { corpusFile, REAL_TEST_MODELS } from '../test/helpers/models.js';
import { fetchFrom, npmVadTarball, packArchive, vadEntryFor } from '../test/helpers/pack-archive.js';

const RECOGNISER = 'sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01';
const SPEECH = 'en/cmu-arctic-aew-a0003.wav';
/** What a first start should take at most on a 2-core machine, each figure printed beside it as a ratio. */
const LIMITS_MS = { ready: 15_000, installed: 60_000, transcript: 60_000 };

const tarball = npmVadTarball();
const archive = packArchive(RECOGNISER, REAL_TEST_MODELS.STREAMING_ENGLISH);
const catalogue = [vadEntryFor(tarball), { ...findCatalogueEntry(RECOGNISER)!, size: archive.length, sha256: createHash('sha256').update(archive).digest('hex') }];
const files = new Map([
  [path.posix.basename(new URL(catalogue[0]!.url).pathname), tarball],
  [path.posix.basename(new URL(catalogue[1]!.url).pathname), archive],
]);
const network = http.createServer((req, res) => {
  const body = files.get(path.posix.basename(req.url ?? ''));
  if (!body) return void res.writeHead(404).end();
  res.writeHead(200, { 'content-length': body.length }).end(body);
});
await new Promise<void>((resolve) => network.listen(0, '127.0.0.1', resolve));
const networkUrl = `http://127.0.0.1:${(network.address() as AddressInfo).port}`;

const dataDir = mkdtempSync(path.join(tmpdir(), 'parley-bench-first-run-'));
const config = loadConfig({}, { port: 0, host: '127.0.0.1', dataDir, modelsDir: path.join(dataDir, 'models'), logLevel: 'warn' });
const started = performance.now();
const server = await buildServer(config, { logger: false, firstRun: true, catalogue: () => catalogue, packFetch: fetchFrom(networkUrl) });
const url = await server.listen();
const { key } = await server.storage.apiKeys.create({ name: 'bench', role: KEY_ROLES.admin });
const auth = { authorization: `Bearer ${key}` };

async function until(done: () => Promise<boolean>): Promise<number> {
  while (!(await done())) await new Promise((r) => setTimeout(r, 50));
  return performance.now() - started;
}

const ready = await until(async () => (await fetch(`${url}/readyz`)).status === 200);
const installed = await until(async () => {
  const body = (await (await fetch(`${url}/readyz`, { headers: auth })).json()) as { firstRun?: { detail: { state: string } } };
  return body.firstRun?.detail.state === 'done' || body.firstRun?.detail.state === 'offline';
});
const wav = readFileSync(corpusFile(SPEECH));
let transcript = '';
const transcribed = await until(async () => {
  const res = await fetch(`${url}/api/v1/stt/get_text?language=en`, { method: 'POST', headers: { ...auth, 'content-type': 'audio/wav' }, body: wav });
  const body = (await res.json()) as { transcription?: string };
  transcript = body.transcription ?? '';
  return res.status === 200;
});

const row = (name: string, value: number, limit: number) => console.log(`${name.padEnd(44)} ${(value / 1000).toFixed(2).padStart(7)} s   limit ${(limit / 1000).toFixed(0)} s   ratio ${(value / limit).toFixed(2)}`);
console.log(`first start, fresh data dir, packs from loopback (VAD tarball ${(tarball.length / 1e6).toFixed(1)} MB, recogniser ${(archive.length / 1e6).toFixed(1)} MB)`);
row('start → /readyz 200 (speech served)', ready, LIMITS_MS.ready);
row('start → VAD and recogniser installed, loaded', installed, LIMITS_MS.installed);
row('start → first transcript', transcribed, LIMITS_MS.transcript);
console.log(`transcript: "${transcript}"`);
await server.close();
network.close();
