/** Warm start: /readyz says not ready until every codec has been compiled and run once (in every thread that uses it), then ready. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '../src/config.js';
import { buildServer } from '../src/server.js';
import { freePort } from './helpers/server-process.js';
import { startTestServer } from './helpers/server.js';

describe('warm start', () => {
  it('reports not ready while the codecs warm up, and ready once they have', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'parley-warm-'));
    const config = loadConfig({}, { port: 0, host: '127.0.0.1', dataDir, modelsDir: path.join(dataDir, 'models'), logLevel: 'silent' });
    let finish!: () => void;
    const warming = new Promise<void>((resolve) => (finish = resolve));
    let started = false;
    const server = await buildServer(config, {
      logger: false,
      engines: false,
      warmUp: async () => {
        started = true;
        await warming;
        return ['stand-in codec'];
      },
    });
    try {
      const url = await server.listen();
      assert.ok(started);
      const before = await fetch(`${url}/readyz`);
      assert.equal(before.status, 503);
      assert.deepEqual(await before.json(), { status: 'not_ready' });
      finish();
      await server.warmedUp;
      const after = await fetch(`${url}/readyz`);
      assert.equal(after.status, 200);
      assert.deepEqual(await after.json(), { status: 'ready' });
    } finally {
      finish();
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('is ready only once every decode thread has warmed its decoders, eSpeak has spoken in each voice variant and real speech has streamed in every format', async () => {
    const metricsPort = await freePort();
    const s = await startTestServer({ engines: true, config: { logLevel: 'silent', transcription: { decodeWorkers: 2 }, synthesis: { warmUpRounds: 1 }, metrics: { port: metricsPort } } });
    try {
      await s.server.warmedUp;
      const res = await s.api('/readyz');
      assert.equal(res.status, 200);
      const { codecs } = (await res.json()) as { codecs: { ok: boolean; warmed: string[] } };
      for (const name of ['resampler', 'decode wav', 'decode mp3', 'decode flac', 'decode opus', 'decode vorbis']) {
        assert.ok(codecs.warmed.includes(`decode worker ${name}`), `${name}: ${codecs.warmed.join(', ')}`);
      }
      for (const voice of ['espeak-en-us-male', 'espeak-en-us-female']) assert.ok(codecs.warmed.includes(`synthesis ${voice}`), `${voice}: ${codecs.warmed.join(', ')}`);
      for (const format of ['pcm', 'wav', 'mp3', 'mulaw', 'opus', 'flac']) assert.ok(codecs.warmed.includes(`synthesis stream ${format}`), `${format}: ${codecs.warmed.join(', ')}`);

      // No client asked for the warm-up's audio: the metrics count only what clients get.
      const audioSeries = /^parley_tts_audio_seconds_total\{[^}]*\} (\S+)$/m;
      const metrics = async () => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      assert.doesNotMatch(await metrics(), audioSeries);
      const speech = await s.api('/api/v1/tts-v2/get_speech', { method: 'POST', json: { text: 'Hello there.', voice_id: 'espeak-en-us-female' } });
      assert.equal(speech.status, 200);
      await speech.arrayBuffer();
      const seconds = Number(audioSeries.exec(await metrics())?.[1]);
      assert.ok(seconds > 0.3 && seconds < 3, `one short sentence counted: ${seconds}`);
    } finally {
      await s.close();
    }
  });
});
