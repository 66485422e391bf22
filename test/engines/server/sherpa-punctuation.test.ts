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
import { ONLINE_PUNCTUATION_FIXTURE, PUNCTUATION_FIXTURE, punctuationFixturePack } from '../../fixtures/punctuation-pack.js';

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

/**
 * The online (CNN-BiLSTM) fixture, test/fixtures/models/fake-online-punct-en-cnn-bilstm-table:
 * model.onnx with the upstream model's inputs, outputs and metadata, and its bpe.vocab; a word's
 * case and mark are fixed lookups of its first piece, so sherpa's answer is known.
 */
describe('punctuation engine (OnlinePunctuation on the fixture)', () => {
  let core: InferenceCore;
  let pack: ModelPack;
  let dir: string;
  before(async () => {
    ({ pack, dir } = await punctuationFixturePack(ONLINE_PUNCTUATION_FIXTURE));
    core = new InferenceCore({ workers: 1 });
  });
  after(async () => {
    await core?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is detected as an online (CNN-BiLSTM) pack for English, with its model and BPE vocabulary', () => {
    assert.equal(pack.kind, 'punctuation-cnn-bilstm');
    assert.deepEqual(pack.languages, ['en']);
    assert.match(pack.files.model!, /model\.onnx$/);
    assert.match(pack.files.bpeVocab!, /bpe\.vocab$/);
  });

  it("restores case and punctuates on a worker thread as the model's tables say, over more than one 200-piece row", async () => {
    const punctuator = createPunctuator(core, enginePackAs('online-punctuation', pack));
    assert.equal(punctuator.restoresCase, true);
    assert.equal(await punctuator.punctuate('hello my name is john i live in london how are you today'), 'hello, my name is John. i live in London, how are you today?');
    // Words of no piece of their own take the case and mark of their first piece ("johnny" starts with "john"); sherpa ends nothing itself.
    assert.equal(await punctuator.punctuate('we watch bbc tv on monday zebra johnny'), 'we watch BBC TV on Monday zebra Johnny.');
    const long = Array.from({ length: 450 }, (_, i) => (i % 10 === 9 ? 'today' : 'london')).join(' ');
    const words = (await punctuator.punctuate(long)).split(' ');
    assert.equal(words.length, 450);
    assert.equal(words.filter((w) => w === 'today?').length, 45);
    assert.equal(words.filter((w) => w === 'London,').length, 405);
    await punctuator.close();
    assert.ok(!core.models.some((key: string) => key.includes(ONLINE_PUNCTUATION_FIXTURE)), 'close unloads it');
  });

  it('refuses a pack without its bpe.vocab before sherpa sees it', () => {
    assert.throws(() => createPunctuator(core, enginePackAs('online-punctuation', { ...pack, files: { model: pack.files.model! } })), ModelPackError);
  });
});

