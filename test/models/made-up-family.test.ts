/**
 * Adding a TTS family that runs on an existing engine is one module and one line in the families
 * list. The module here (fixtures/chime-family.ts) declares a made-up "chime" family reusing
 * Piper's kind definition; registering it at run time stands for its line in MODEL_FAMILIES.
 * The whole server path then takes it: detection, verification in a child, loading in an
 * inference process, and synthesis with the Piper fixture's model through it.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildEngines, type Engines } from '../../src/compose/engines.js';
import { loadConfig } from '../../src/config.js';
import { scanModelPacks } from '../../src/models/detect.js';
import { enginePackOf, registerModelFamily } from '../../src/models/families/index.js';
import { needs, sharedModel } from '../helpers/models.js';
import { chimeFamily } from './fixtures/chime-family.js';

const FIXTURE = 'fake-piper-tones-en_US-16k';

describe('a made-up TTS family registered at run time', { skip: needs({ models: [FIXTURE] }) }, () => {
  let modelsDir: string;
  let dataDir: string;
  let engines: Engines | undefined;
  let unregister: (() => void) | undefined;

  before(() => {
    modelsDir = mkdtempSync(path.join(tmpdir(), 'parley-chime-models-'));
    dataDir = mkdtempSync(path.join(tmpdir(), 'parley-chime-data-'));
    const folder = path.join(modelsDir, 'chime-voice');
    mkdirSync(folder);
    for (const file of ['model.onnx', 'tokens.txt']) symlinkSync(path.join(sharedModel(FIXTURE), file), path.join(folder, file));
    writeFileSync(path.join(folder, 'chime.json'), '{}\n');
  });
  after(async () => {
    await engines?.close();
    unregister?.();
    rmSync(modelsDir, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is recognised once registered, with the config of the engine it reuses', async () => {
    const [piper] = (await scanModelPacks(modelsDir)).packs;
    assert.equal(piper?.kind, 'tts-vits', 'unregistered, the folder is a Piper pack');

    unregister = registerModelFamily(chimeFamily);

    const [chime] = (await scanModelPacks(modelsDir)).packs;
    assert.equal(chime?.kind, 'tts-chime');
    const built = enginePackOf(chime!);
    assert.equal(built.capability, 'tts');
    assert.deepEqual(built.config, enginePackOf({ ...chime!, kind: 'tts-vits' }).config, "Piper's engine config");
  });

  it('is verified in a child, loaded in an inference process, and speaks', async () => {
    assert.ok(unregister, 'registered by the test above');
    engines = await buildEngines(loadConfig({}, { dataDir, modelsDir, logLevel: 'silent' }));
    const report = engines.models.report();
    assert.deepEqual(report.skipped, []);
    assert.deepEqual(report.loaded, [{ id: 'chime-voice', kind: 'tts-chime', languages: ['en'] }]);

    const resolved = engines.voices.find('tts-v2', 'chime-voice');
    assert.ok(resolved, 'the pack voice is offered');
    assert.equal(resolved.voice.engine, 'sherpa-chime');
    const pieces: Float32Array[] = [];
    for await (const piece of resolved.engine.synthesize(resolved.voice, 'Hello from a family that did not exist a moment ago.', { speed: 1, language: 'en' })) {
      pieces.push(piece);
    }
    const samples = pieces.reduce((n, p) => n + p.length, 0);
    let energy = 0;
    for (const piece of pieces) for (const s of piece) energy += s * s;
    const rms = Math.sqrt(energy / Math.max(1, samples));
    assert.ok(samples > resolved.voice.sampleRate * 0.5, `at least half a second of audio (${samples} samples)`);
    assert.ok(rms > 0.01, `audible, not silence (rms ${rms.toFixed(4)})`);
  });
});
