import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RecognizedSegment } from '../../src/engines/types.js';
import { assembleWords, joinWords } from '../../src/transcription/words.js';

const segment = (s: Partial<RecognizedSegment>): RecognizedSegment => ({ text: '', tokens: [], timestamps: [], durations: [], ...s });

function assertWellFormed(words: { start: number; end: number }[], span: { start: number; end: number }) {
  words.forEach((w, i) => {
    assert.ok(w.start >= span.start && w.end <= span.end && w.end >= w.start, `word ${i} inside the segment`);
    if (i > 0) assert.ok(w.start >= words[i - 1]!.end, `word ${i} after word ${i - 1}`);
  });
}

describe('assembleWords', () => {
  it('joins BPE pieces into words at ▁ or a leading space and times them from their tokens', () => {
    const span = { start: 10, end: 13 };
    for (const marker of ['▁', ' ']) {
      const words = assembleWords(
        segment({ text: 'AND MY FELLOW', tokens: [`${marker}AND`, `${marker}MY`, `${marker}FE`, 'LL', 'OW'], timestamps: [0.2, 0.5, 0.9, 0.95, 1.0] }),
        span,
      );
      assert.deepEqual(words.map((w) => w.word), ['AND', 'MY', 'FELLOW']);
      assert.deepEqual(words.map((w) => w.start), [10.2, 10.5, 10.9]);
      assert.equal(words[0]!.end, 10.5, 'a word ends where the next starts');
      assert.ok(Math.abs(words[2]!.end - 11.6) < 1e-9, 'the last word ends at its last token + 0.6 s');
      assertWellFormed(words, span);
    }
  });

  it('uses token durations when the model gives them (NeMo TDT)', () => {
    const words = assembleWords(segment({ text: 'hi there', tokens: ['▁hi', '▁there'], timestamps: [0.1, 1.0], durations: [0.2, 0.3] }), { start: 0, end: 5 });
    assert.deepEqual(words.map((w) => [w.start, w.end]), [[0.1, 0.30000000000000004], [1.0, 1.3]]);
  });

  it('keeps words inside the segment when tokens are timed past its end', () => {
    const span = { start: 2, end: 3 };
    const words = assembleWords(segment({ text: 'A B C', tokens: ['▁A', '▁B', '▁C'], timestamps: [0.5, 0.5, 1.4] }), span);
    assertWellFormed(words, span);
    assert.equal(words[2]!.start, 3);
  });

  it('prefers the decoded spelling when it has one word per token group', () => {
    const words = assembleWords(segment({ text: 'Hello, world.', tokens: [' Hel', 'lo', ',', ' world', '.'], timestamps: [0, 0.2, 0.3, 0.5, 0.9] }), { start: 0, end: 2 });
    assert.deepEqual(words.map((w) => w.word), ['Hello,', 'world.']);
  });

  it('drops control tokens and makes each Han character a word', () => {
    const words = assembleWords(segment({ text: '你好世界', tokens: ['<|zh|>', '你', '好', '世', '界'], timestamps: [0, 0.1, 0.3, 0.5, 0.7] }), { start: 0, end: 1 });
    assert.deepEqual(words.map((w) => w.word), ['你', '好', '世', '界']);
    assert.deepEqual(words.map((w) => w.start), [0.1, 0.3, 0.5, 0.7]);
  });

  it('estimates times by word length only when the model gives no token times', () => {
    const span = { start: 1, end: 3 };
    const words = assembleWords(segment({ text: 'a bbb', tokens: [' a', ' bbb'] }), span);
    assert.deepEqual(words, [
      { word: 'a', start: 1, end: 1.6666666666666665 },
      { word: 'bbb', start: 1.6666666666666665, end: 3 },
    ]);
    assert.deepEqual(assembleWords(segment({}), span), []);
  });
});

describe('joinWords', () => {
  it('puts spaces between words but writes CJK characters together', () => {
    assert.equal(joinWords(['so', 'it', ' begins ']), 'so it begins');
    assert.equal(joinWords(['大', '学', '生', 'KFC', '吃']), '大学生 KFC 吃');
    assert.equal(joinWords(['', 'one', ' ']), 'one');
  });
});
