import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, truncateSync, statSync, writeFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { debianEspeakDataDir } from '../../src/engines/capabilities.js';
import { scanModelPacks } from '../../src/models/detect.js';
import type { ModelPack } from '../../src/models/model-pack.js';
import { testLoadPack, verdictCacheDir, verifyPackVerdicts, verifyPacks } from '../../src/models/verify.js';
import { REAL_TEST_MODELS, modelsDirWith, needs, sharedModel } from '../helpers/models.js';
import { SHARED_PACKS } from './fixtures.js';

const NEEDS_REAL = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH] });

const espeakDataDir = process.env.PARLEY_ESPEAK_DATA_DIR ?? debianEspeakDataDir;
const tmp = (prefix: string) => mkdtempSync(path.join(tmpdir(), prefix));

/** A copy of the 16 kHz Piper fixture that tests may damage. */
function piperCopy(): string {
  const models = tmp('parley-verify-models-');
  const dir = path.join(models, 'fake-piper-tones-en_US-16k');
  cpSync(sharedModel('fake-piper-tones-en_US-16k'), dir, { recursive: true });
  return models;
}

describe('verifyPacks', () => {
  const cacheDir = tmp('parley-verdicts-');

  it('finds the shared packs usable, then answers from the cache without a child', { skip: NEEDS_REAL }, async () => {
    const { packs } = await scanModelPacks(modelsDirWith(SHARED_PACKS));
    const first = await verifyPacks(packs, { cacheDir, espeakDataDir, timeoutMs: 60_000 });
    assert.deepEqual(
      first.skipped.map((s) => `${s.pack.id}: ${s.reason}`),
      [],
    );
    assert.equal(first.usable.length, 6);
    assert.ok(readdirSync(cacheDir).length >= 6, 'verdicts written');

    const verdicts = await verifyPackVerdicts(packs, { cacheDir, espeakDataDir });
    assert.ok(verdicts.every((v) => v.fromCache && v.usable), JSON.stringify(verdicts));
    // The 2-speaker fixture's facts come from its test load.
    const twoSpk = verdicts.find((v) => v.id === 'fake-piper-tones-en_US-22k-2spk')!;
    assert.equal(twoSpk.info?.numSpeakers, 2);
    assert.equal(twoSpk.info?.sampleRate, 22050);
  });

  it('skips a truncated model with a reason, and the test process survives', async () => {
    const models = piperCopy();
    const model = path.join(models, 'fake-piper-tones-en_US-16k', 'model.onnx');
    truncateSync(model, Math.floor(statSync(model).size / 2));
    const { packs, problems } = await scanModelPacks(models);
    assert.deepEqual(problems, []);
    const piper = packs.find((p) => p.id === 'fake-piper-tones-en_US-16k')!;
    assert.equal(piper.kind, 'tts-vits');
    const { usable, skipped } = await verifyPacks(packs, { cacheDir: tmp('parley-verdicts-'), espeakDataDir });
    assert.equal(usable.length, 0);
    assert.equal(skipped.length, 1);
    assert.match(skipped[0]!.reason, /model model\.onnx is not a valid ONNX model .*truncated/);
  });

  it('skips a model without the metadata sherpa needs', async () => {
    const dir = sharedModel('fake-piper-tones-en_US-16k');
    const pack: ModelPack = {
      id: 'no-metadata',
      dir,
      kind: 'tts-vits',
      files: { model: path.join(dir, 'model-no-metadata.onnx'), tokens: path.join(dir, 'tokens.txt') },
      languages: ['en'],
      voices: [],
      metadata: {},
    };
    const { usable, skipped } = await verifyPacks([pack], { cacheDir: tmp('parley-verdicts-'), espeakDataDir });
    assert.equal(usable.length, 0);
    assert.match(skipped[0]!.reason, /lacks the ONNX metadata sample_rate, n_speakers, language/);
  });

  it('contains a sherpa crash in the child: exit code and sherpa message in the reason', async () => {
    const dir = sharedModel('fake-piper-tones-en_US-16k');
    // Static checks would refuse this one, so the child is asked directly: sherpa exits 255.
    const noMetadata: ModelPack = {
      id: 'no-metadata',
      dir,
      kind: 'tts-vits',
      files: { model: path.join(dir, 'model-no-metadata.onnx'), tokens: path.join(dir, 'tokens.txt') },
      languages: ['en'],
      voices: [],
      metadata: {},
    };
    const result = await testLoadPack(noMetadata, { espeakDataDir, timeoutMs: 60_000 });
    assert.equal(result.ok, false);
    assert.match(result.reason!, /exited with code 255.*sample_rate/);

    // A valid ONNX file of the wrong kind passes the static checks; the child catches it.
    const wrongKind: ModelPack = { ...noMetadata, id: 'wrong-kind', kind: 'vad-silero', files: { model: path.join(dir, 'model.onnx') } };
    const { skipped } = await verifyPacks([wrongKind], { cacheDir: tmp('parley-verdicts-'), espeakDataDir });
    assert.equal(skipped.length, 1);
    assert.match(skipped[0]!.reason, /sherpa-onnx exited with code 255.*Unsupported silero vad model/);
  });

  it('kills a test load that takes too long', { skip: NEEDS_REAL }, async () => {
    const { packs } = await scanModelPacks(modelsDirWith(['silero-vad-v5']));
    const result = await testLoadPack(packs[0]!, { espeakDataDir, timeoutMs: 1 });
    assert.equal(result.ok, false);
    assert.equal(result.timedOut, true);
    assert.match(result.reason!, /did not finish/);
  });

  it('re-tests a pack whose files changed, and checks declared sha256 sums', async () => {
    const models = piperCopy();
    const cache = tmp('parley-verdicts-');
    const packDir = path.join(models, 'fake-piper-tones-en_US-16k');
    let { packs } = await scanModelPacks(models);
    assert.equal((await verifyPacks(packs, { cacheDir: cache, espeakDataDir })).usable.length, 1);

    // Change the tokens file (size and mtime change): the cached verdict no longer applies.
    writeFileSync(path.join(packDir, 'tokens.txt'), readFileSync(path.join(packDir, 'tokens.txt'), 'utf8') + '\n');
    writeFileSync(
      path.join(packDir, 'pack.json'),
      JSON.stringify({ kind: 'tts-vits', files: { model: 'model.onnx', tokens: 'tokens.txt' }, sha256: { 'model.onnx': '0'.repeat(64) } }),
    );
    ({ packs } = await scanModelPacks(models));
    const verdicts = await verifyPackVerdicts(packs, { cacheDir: cache, espeakDataDir });
    assert.equal(verdicts[0]!.fromCache, false);
    assert.equal(verdicts[0]!.usable, false);
    assert.match(verdicts[0]!.reason!, /sha256 of model\.onnx is ae9999f7.*expected 0000/);
  });

  it('test-loads the zero-shot fixtures in a child: sherpa speaks a word in the voice of a reference sample', async () => {
    const { packs, problems } = await scanModelPacks(modelsDirWith(['fake-pocket-tts-tone-24k', 'fake-zipvoice-envelope-24k']));
    assert.deepEqual(problems, []);
    assert.deepEqual(packs.map((p) => p.kind), ['tts-pocket', 'tts-zipvoice']);
    const { usable, skipped } = await verifyPacks(packs, { cacheDir: tmp('parley-verdicts-'), espeakDataDir });
    assert.deepEqual(skipped.map((s) => s.reason), []);
    assert.equal(usable.length, 2);
    for (const verdict of await verifyPackVerdicts(packs, { cacheDir: tmp('parley-verdicts-'), espeakDataDir })) {
      assert.equal(verdict.info?.sampleRate, 24000);
      assert.ok(Number(verdict.info?.samples) > 0);
    }
  });

  it('verdictCacheDir lives in the data dir', () => {
    assert.equal(verdictCacheDir('/var/lib/parley'), path.join('/var/lib/parley', 'model-verdicts'));
  });
});
