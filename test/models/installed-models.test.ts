/**
 * The installed-models manager over real inference processes: a reload starts new packs and
 * keeps unchanged ones, reports skipped packs and folders that are not packs, and a request
 * holding the engines keeps them across a reload that removes their pack.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildEngines, type Engines } from '../../src/compose/engines.js';
import { loadConfig } from '../../src/config.js';
import { sharedModel } from '../helpers/models.js';

describe('InstalledModels', () => {
  let engines: Engines;
  let modelsDir: string;
  const link = (name: string) => symlinkSync(sharedModel(name), path.join(modelsDir, name), 'dir');

  before(async () => {
    modelsDir = mkdtempSync(path.join(tmpdir(), 'parley-installed-'));
    link('fake-piper-tones-en_US-16k');
    const dataDir = mkdtempSync(path.join(tmpdir(), 'parley-installed-data-'));
    engines = await buildEngines(loadConfig({}, { dataDir, modelsDir, logLevel: 'silent' }));
  });
  after(() => engines.close());

  it('loads what the folder holds and offers its voices beside the built-in ones', () => {
    const report = engines.models.report();
    assert.deepEqual(report.loaded.map((p) => p.id), ['fake-piper-tones-en_US-16k']);
    assert.deepEqual(report.started, ['fake-piper-tones-en_US-16k']);
    assert.ok(engines.voices.find('tts-v2', 'fake-piper-tones-en_US-16k'), 'the pack voice is offered');
    assert.ok(engines.voices.find('tts-v2', 'espeak-en-us-male'), 'the built-in voices stay');
  });

  it('a reload starts a new pack, keeps the unchanged one, and names what it skipped and why', async () => {
    link('fake-piper-tones-en_US-22k-2spk');
    mkdirSync(path.join(modelsDir, 'notes'));
    writeFileSync(path.join(modelsDir, 'notes', 'readme.txt'), 'not a model');
    const report = await engines.models.reload();
    assert.deepEqual(report.started, ['fake-piper-tones-en_US-22k-2spk']);
    assert.deepEqual(report.kept, ['fake-piper-tones-en_US-16k']);
    assert.deepEqual(report.problems, [{ id: 'notes', reason: 'no .onnx model file found' }]);
    assert.equal(report.voices, 3, 'one voice plus two speakers');
  });

  it('engines held by a request stay usable after a reload removes their pack', async () => {
    const held = engines.models.acquire();
    assert.ok(held);
    const voice = engines.voices.find('tts-v2', 'fake-piper-tones-en_US-22k-2spk-1');
    assert.ok(voice);
    rmSync(path.join(modelsDir, 'fake-piper-tones-en_US-22k-2spk'));
    const report = await engines.models.reload();
    assert.deepEqual(report.loaded.map((p) => p.id), ['fake-piper-tones-en_US-16k']);
    assert.equal(engines.voices.find('tts-v2', 'fake-piper-tones-en_US-22k-2spk-1'), undefined, 'no longer offered');
    const chunks: Float32Array[] = [];
    for await (const c of voice.engine.synthesize(voice.voice, 'Hello.', { speed: 1, language: 'en' })) chunks.push(c);
    assert.ok(chunks.reduce((n, c) => n + c.length, 0) > 0, 'the held engine still synthesises');
    held.release();
  });
});
