import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { stitchWords } from '../../src/transcription/stitch.js';
import type { TimedWord } from '../../src/transcription/words.js';

/** Words of `text`, one every `step` seconds from `from`, each lasting 0.3 s. */
function words(text: string, from: number, step = 0.4): TimedWord[] {
  return text.split(' ').map((word, i) => ({ word, start: from + i * step, end: from + i * step + 0.3 }));
}

const text = (ws: TimedWord[]) => ws.map((w) => w.word).join(' ');

describe('stitchWords', () => {
  // Sentence: "one two three four five six seven eight", one word per 0.4 s from 0 s; the windows overlap on 1.0-2.2 s.
  const all = words('one two three four five six seven eight', 0);

  it('joins at a word both windows heard: nothing dropped, nothing repeated', () => {
    const earlier = all.filter((w) => w.start < 2.2);
    const later = all.filter((w) => w.end > 1.0);
    assert.equal(text(stitchWords(earlier, later, { start: 1.0, end: 2.2 })), text(all));
  });

  it('takes each side where it is reliable: the earlier window before the join, the later one after', () => {
    // The earlier window misheard its last word (no right context); the later one its first.
    const earlier = [...all.slice(0, 5), { word: 'fiction', start: 2.0, end: 2.3 }];
    const later = [{ word: 'tree', start: 1.2, end: 1.5 }, ...all.slice(4)];
    assert.equal(text(stitchWords(earlier, later, { start: 1.0, end: 2.4 })), 'one two three four five six seven eight');
  });

  it('matches spelling case- and punctuation-blind, but not words far apart in time', () => {
    const earlier = words('so we went there', 0);
    const later = words('There, and back', 1.2);
    assert.equal(text(stitchWords(earlier, later, { start: 1.0, end: 1.6 })), 'so we went there and back');
    // "there" at 1.2 s and at 2.0 s are two words (the speaker said it twice): no match, so the cut falls mid-overlap.
    const far = words('there and back', 2.0);
    assert.equal(text(stitchWords(earlier, far, { start: 1.0, end: 2.2 })), 'so we went there there and back');
  });

  it('falls back to the middle of the overlap when the windows agree on no word', () => {
    const earlier = words('alpha beta gamma', 0);
    const later = words('delta epsilon', 0.8);
    // Overlap 0.6-1.0, middle 0.8: gamma's middle (0.95 s) is past it, so it was the later window's to give, and that window did not hear it.
    assert.equal(text(stitchWords(earlier, later, { start: 0.6, end: 1.0 })), 'alpha beta delta epsilon');
  });

  it('keeps times ordered and non-overlapping across the join', () => {
    const earlier = [
      { word: 'a', start: 0, end: 0.5 },
      { word: 'b', start: 0.6, end: 1.2 },
    ];
    const later = [
      { word: 'b', start: 0.55, end: 0.9 },
      { word: 'c', start: 1.0, end: 1.4 },
    ];
    const stitched = stitchWords(earlier, later, { start: 0.4, end: 1.2 });
    assert.equal(text(stitched), 'a b c');
    stitched.forEach((w, i) => {
      assert.ok(w.end >= w.start);
      if (i > 0) assert.ok(w.start >= stitched[i - 1]!.end, `word ${i} starts after word ${i - 1} ends`);
    });
  });
});
