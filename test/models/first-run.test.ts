/**
 * Issue 40: a fresh start transcribes with no manual step. The "network" is a loopback HTTP server
 * serving what the catalogue names: the VAD inside an npm package tarball (package/dist/silero_vad.onnx,
 * the real Silero VAD v5 file, as @livekit/agents-plugin-silero ships it) and the tiny streaming
 * English recogniser as a release archive. The server installs both in the background, test-loads
 * them, and a WAV of real speech is transcribed. The recogniser is tried once (remembered in the
 * data dir); the VAD comes back whenever it is missing; offline, /readyz says so and stays ready.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { findCatalogueEntry, type CatalogueEntry } from '../../src/models/catalogue.js';
import { FIRST_RUN_FILE } from '../../src/models/first-run.js';
import { REAL_TEST_MODELS, corpusFile, needs } from '../helpers/models.js';
import { fetchFrom, npmVadTarball, packArchive, vadEntryFor } from '../helpers/pack-archive.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH], corpus: true });
const RECOGNISER = 'sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01';
const SPEECH = 'en/cmu-arctic-aew-a0003.wav';

/** The loopback "network": files by name, each request recorded. */
async function startNetwork(files: Map<string, Buffer>): Promise<{ url: string; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    const body = files.get(path.posix.basename(req.url ?? ''));
    if (!body) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-length': body.length }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, close: () => new Promise((r) => server.close(() => r())) };
}

/** The catalogue's VAD entry with the test tarball's checksums, and the tiny recogniser: the recommended one for English here. */
function testCatalogue(tarball: Buffer, archive: Buffer): CatalogueEntry[] {
  const recogniser = findCatalogueEntry(RECOGNISER)!;
  return [vadEntryFor(tarball), { ...recogniser, size: archive.length, sha256: createHash('sha256').update(archive).digest('hex') }];
}

async function readiness(s: TestServer): Promise<any> {
  return (await s.api('/readyz')).json();
}

/** Waits until the first-run installs have ended (they run in the background). */
async function firstRunEnded(s: TestServer): Promise<any> {
  const deadline = Date.now() + 240_000;
  for (;;) {
    const body = await readiness(s);
    if (body.firstRun?.detail.state !== 'installing' && body.firstRun?.detail.state !== 'waiting') return body;
    if (Date.now() > deadline) throw new Error(`first-run installs did not end: ${JSON.stringify(body.firstRun)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function transcribe(s: TestServer): Promise<{ status: number; body: any }> {
  const res = await s.api('/api/v1/stt/get_text?language=en&word_timestamps=true', {
    method: 'POST',
    headers: { 'content-type': 'audio/wav' },
    body: readFileSync(corpusFile(SPEECH)),
  });
  return { status: res.status, body: await res.json() };
}

describe('first start with a network', { skip: NEEDS }, () => {
  let network: Awaited<ReturnType<typeof startNetwork>>;
  let catalogue: CatalogueEntry[];
  let dataDir: string;
  let modelsDir: string;
  let s: TestServer | undefined;

  before(async () => {
    const tarball = npmVadTarball();
    const archive = packArchive(RECOGNISER, REAL_TEST_MODELS.STREAMING_ENGLISH);
    catalogue = testCatalogue(tarball, archive);
    network = await startNetwork(
      new Map([
        [path.posix.basename(new URL(catalogue[0]!.url).pathname), tarball],
        [path.posix.basename(new URL(catalogue[1]!.url).pathname), archive],
      ]),
    );
    dataDir = mkdtempSync(path.join(tmpdir(), 'parley-first-run-'));
    modelsDir = path.join(dataDir, 'models');
  });
  after(async () => {
    await s?.close();
    await network?.close();
  });

  const start = () =>
    startTestServer({ engines: true, firstRun: true, catalogue: () => catalogue, packFetch: fetchFrom(network.url), config: { dataDir, modelsDir } });

  it('installs the VAD from the npm tarball and the recommended recogniser, then transcribes a WAV', async () => {
    s = await start();
    // Ready for speech while the packs download.
    assert.equal((await fetch(`${s.url}/readyz`)).status, 200);
    const body = await firstRunEnded(s);
    assert.deepEqual(body.firstRun.detail.installed, ['silero-vad', RECOGNISER], JSON.stringify(body.firstRun));
    assert.deepEqual(body.firstRun.detail.failed, []);
    assert.equal(body.notes, undefined, 'nothing is missing any more');
    // Only silero_vad.onnx of the tarball, checked against the pinned sha256 that verification keeps checking.
    const record = JSON.parse(readFileSync(path.join(modelsDir, 'silero-vad/.parley-pack.json'), 'utf8'));
    assert.deepEqual(record.sha256, { 'silero_vad.onnx': '1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3' });
    assert.equal(existsSync(path.join(modelsDir, 'silero-vad/package.json')), false);

    const { status, body: result } = await transcribe(s);
    assert.equal(status, 200, JSON.stringify(result));
    assert.equal(result.status, 'success');
    assert.ok(result.words.length >= 3, `words heard: ${result.transcription}`);

    const remembered = JSON.parse(readFileSync(path.join(dataDir, FIRST_RUN_FILE), 'utf8'));
    assert.equal(remembered.recognizer.pack, RECOGNISER);
    assert.equal(remembered.recognizer.outcome, 'installed');
    await s.close();
    s = undefined;
  });

  it('the next start pulls the VAD again when it is gone, but not a recogniser the operator removed', async () => {
    rmSync(path.join(modelsDir, 'silero-vad'), { recursive: true });
    rmSync(path.join(modelsDir, RECOGNISER), { recursive: true });
    network.requests.length = 0;
    s = await start();
    const body = await firstRunEnded(s);
    assert.deepEqual(body.firstRun.detail.installed, ['silero-vad']);
    assert.deepEqual(network.requests, [`/${path.posix.basename(new URL(catalogue[0]!.url).pathname)}`]);
    assert.match(body.notes[0], /no speech recognition model is installed/);
    const { status, body: refused } = await transcribe(s);
    assert.equal(status, 400);
    assert.match(refused.error, new RegExp(`parley models pull ${RECOGNISER}`));
  });
});

describe('first start offline', () => {
  let s: TestServer;
  before(async () => {
    // A port nothing listens on: the download host cannot be reached.
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const unreachable = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((r) => closed.close(r));
    s = await startTestServer({ engines: true, firstRun: true, packFetch: fetchFrom(unreachable) });
  });
  after(() => s?.close());

  it('/readyz stays ready and says, to every caller, that the packs could not be downloaded; nothing is remembered', async () => {
    await firstRunEnded(s);
    const anonymous = await fetch(`${s.url}/readyz`);
    assert.equal(anonymous.status, 200);
    const body = (await anonymous.json()) as { status: string; notes: string[] };
    assert.equal(body.status, 'ready');
    assert.equal(body.notes.length, 1);
    assert.match(body.notes[0]!, /^Offline: the download of silero-vad could not reach its host\. Transcription is unavailable: /);
    assert.match(body.notes[0]!, /`parley models pull sherpa-onnx-moonshine-base-en-int8 silero-vad`/);
    assert.equal(existsSync(path.join(s.config.dataDir, FIRST_RUN_FILE)), false, 'offline is not an attempt: the next start tries again');
    // Speech is served meanwhile.
    const speech = await s.api('/api/v1/tts-v2/get_speech', { method: 'POST', json: { text: 'Hello.', voice_id: 'espeak-en-us-female' } });
    assert.equal(speech.status, 200);
  });
});

describe("first start where only the VAD's host answers", { skip: NEEDS }, () => {
  let network: Awaited<ReturnType<typeof startNetwork>>;
  let s: TestServer;
  before(async () => {
    const tarball = npmVadTarball();
    const catalogue = testCatalogue(tarball, packArchive(RECOGNISER, REAL_TEST_MODELS.STREAMING_ENGLISH));
    network = await startNetwork(new Map([[path.posix.basename(new URL(catalogue[0]!.url).pathname), tarball]]));
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const unreachable = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((r) => closed.close(r));
    // The VAD comes from the npm registry, which a machine may reach when the recogniser's host is not.
    const viaNetwork = fetchFrom(network.url);
    const viaNothing = fetchFrom(unreachable);
    const packFetch: typeof fetch = (url, init) => (String(url) === catalogue[0]!.url ? viaNetwork(url, init) : viaNothing(url, init));
    s = await startTestServer({ engines: true, firstRun: true, catalogue: () => catalogue, packFetch });
  });
  after(async () => {
    await s?.close();
    await network?.close();
  });

  it('serves the VAD it installed at once, and names only the recogniser as missing', async () => {
    const body = await firstRunEnded(s);
    assert.equal(body.status, 'ready');
    assert.match(body.notes[0]!, new RegExp(`^Offline: the download of ${RECOGNISER} could not reach its host\\.`));
    assert.doesNotMatch(body.notes[0]!, /voice activity/, 'the VAD is installed and loaded');
    const { status, body: answer } = await transcribe(s);
    assert.equal(status, 400);
    assert.match(answer.error, new RegExp(`parley models pull ${RECOGNISER}\``));
    assert.doesNotMatch(answer.error, /silero-vad/);
  });
});

describe('models.autoPull=false', () => {
  it('installs nothing and shows no first-run check', async () => {
    const s = await startTestServer({ engines: true, firstRun: true, packFetch: () => Promise.reject(new Error('no download expected')), config: { models: { autoPull: false } } });
    try {
      const body = await readiness(s);
      assert.equal(body.firstRun, undefined);
      assert.equal(existsSync(path.join(s.config.modelsDir, 'silero-vad')), false);
    } finally {
      await s.close();
    }
  });
});
