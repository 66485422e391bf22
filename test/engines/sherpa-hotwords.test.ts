/** What sherpa needs to boost keywords: the vocabulary derived from bpe.model, and the hotwords lines and files. */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { bpeVocabFromModel, bpeVocabOf, dropHotwordsFiles, hotwordLines, hotwordsFile, tokensAreUpperCase } from '../../src/engines/sherpa-hotwords.js';
import { REAL_TEST_MODELS, needs, sharedModel } from '../helpers/models.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.STREAMING_ENGLISH] });

describe('sherpa hotwords support', () => {
  it('derives bpe.vocab from bpe.model exactly as SentencePiece exports it (the shared pack carries both)', { skip: NEEDS }, () => {
    const dir = sharedModel(REAL_TEST_MODELS.STREAMING_ENGLISH);
    if (!existsSync(path.join(dir, 'bpe.vocab'))) return; // a pulled copy ships bpe.model only: derivation is all there is
    const derived = bpeVocabFromModel(readFileSync(path.join(dir, 'bpe.model')));
    assert.equal(derived, readFileSync(path.join(dir, 'bpe.vocab'), 'utf8'));
    const file = bpeVocabOf({ bpeModel: path.join(dir, 'bpe.model') })!;
    assert.equal(readFileSync(file, 'utf8'), derived, 'written to the cache for a pack without bpe.vocab');
    assert.equal(bpeVocabOf({ bpeVocab: '/pack/bpe.vocab', bpeModel: '/pack/bpe.model' }), '/pack/bpe.vocab', 'a shipped vocabulary wins');
    assert.equal(bpeVocabOf({}), undefined);
    assert.equal(tokensAreUpperCase(path.join(dir, 'tokens.txt')), true);
  });

  it('refuses a file that is not a SentencePiece model', () => {
    assert.throws(() => bpeVocabFromModel(new Uint8Array([0x08, 0x01])), /no pieces/);
    assert.throws(() => bpeVocabFromModel(new Uint8Array([0x0a, 0x80])), /truncated/);
  });

  it('writes one "PHRASE :score" line per keyword into a content-named file per owner', () => {
    const lines = hotwordLines([{ phrase: 'security code', score: 3 }, { phrase: 'Parley', score: 1.5 }], true);
    assert.deepEqual(lines, ['SECURITY CODE :3', 'PARLEY :1.5']);
    const a = hotwordsFile(lines, 'test-owner');
    assert.equal(hotwordsFile(lines, 'test-owner'), a, 'the same list is the same file');
    assert.notEqual(hotwordsFile(lines, 'other-owner'), a, 'owners never share files');
    assert.equal(readFileSync(a, 'utf8'), 'SECURITY CODE :3\nPARLEY :1.5\n');
    dropHotwordsFiles('test-owner');
    dropHotwordsFiles('other-owner');
    assert.equal(existsSync(a), false);
  });
});
