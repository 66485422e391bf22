/**
 * The punctuation engine on the hand-made CT-Transformer fixture (test/fixtures/models/
 * fake-punct-ct-transformer-en-marks: the mark after a word is a fixed table lookup, so sherpa's
 * answer is known): the pack is found by its family, and `punctuate` tasks run on the worker
 * threads through sherpa-onnx's OfflinePunctuation.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { InferenceCore } from '../../../src/engines/inference/inference-core.js';
import { createPunctuator } from '../../../src/engines/server/sherpa-punctuation.js';
import { ModelPackError } from '../../../src/errors.js';
import type { ModelPack } from '../../../src/models/model-pack.js';
import { enginePackAs } from '../../../src/models/families/index.js';
import { PUNCTUATION_FIXTURE, punctuationFixturePack } from '../../fixtures/punctuation-pack.js';

describe('punctuation engine (OfflinePunctuation on the fixture)', () => {
  let core: InferenceCore;
  let pack: ModelPack;
  let dir: string;
  before(async () => {
    ({ pack, dir } = await punctuationFixturePack());
    core = new InferenceCore({ workers: 1 });
  });
  after(async () => {
    await core?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is detected as a CT-Transformer pack for Chinese and English', () => {
    assert.equal(pack.kind, 'punctuation-ct-transformer');
    assert.deepEqual(pack.languages, ['zh', 'en']);
  });

  it('punctuates on a worker thread with the marks the model scores highest, the text ended by sherpa', async () => {
    const punctuator = createPunctuator(core, enginePackAs('offline-punctuation', pack));
    assert.equal(punctuator.restoresCase, false);
    assert.equal(await punctuator.punctuate('hello how are you today i am fine thank you'), 'hello，how are you today？i am fine，thank you。');
    // Case is kept (the model reads lower case); words it does not know take no mark; empty stays empty.
    assert.equal(await punctuator.punctuate('Well unknown Words now'), 'Well，unknown Words now。');
    assert.equal(await punctuator.punctuate(''), '');
    assert.ok(core.models.some((key: string) => key.includes(PUNCTUATION_FIXTURE)), 'the model stays loaded under its key');
    await punctuator.close();
    assert.ok(!core.models.some((key: string) => key.includes(PUNCTUATION_FIXTURE)), 'close unloads it');
  });

  it('refuses a pack whose model is missing before sherpa sees it', () => {
    assert.throws(() => createPunctuator(core, enginePackAs('offline-punctuation', { ...pack, files: { model: '/nonexistent/model.onnx' } })), ModelPackError);
  });
});
