import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assignSpeakers, buildUtterances, labelSingleSpeaker } from '../../src/transcription/speakers.js';

const words = [
  { word: 'one', start: 0.0, end: 0.4 },
  { word: 'two', start: 0.5, end: 0.9 },
  { word: 'three', start: 2.0, end: 2.4 },
  { word: 'four', start: 2.5, end: 2.9 },
  { word: 'five', start: 5.0, end: 5.4 },
];

describe('assignSpeakers', () => {
  it('takes the speaker with the largest overlap and names speakers in order of appearance', () => {
    const turns = [
      { start: 1.8, end: 3.0, speaker: 0 },
      { start: 0.0, end: 0.45, speaker: 7 },
      { start: 0.45, end: 1.0, speaker: 0 }, // covers most of "two" (and a little of "one")
      { start: 4.0, end: 6.0, speaker: 3 },
    ];
    const labelled = assignSpeakers(words, turns);
    assert.deepEqual(labelled.map((w) => w.speaker), ['speaker_0', 'speaker_1', 'speaker_1', 'speaker_1', 'speaker_2']);
  });

  it('gives a word outside every turn the nearest turn', () => {
    const labelled = assignSpeakers(words, [
      { start: 0, end: 1, speaker: 4 },
      { start: 5.3, end: 6, speaker: 9 },
    ]);
    // "four" (middle 2.7 s) is 1.7 s from the first turn and 2.6 s from the second.
    assert.deepEqual(labelled.map((w) => w.speaker), ['speaker_0', 'speaker_0', 'speaker_0', 'speaker_0', 'speaker_1']);
  });

  it('labels everything speaker_0 without turns', () => {
    assert.ok(assignSpeakers(words, []).every((w) => w.speaker === 'speaker_0'));
    assert.ok(labelSingleSpeaker(words).every((w) => w.speaker === 'speaker_0'));
  });
});

describe('buildUtterances', () => {
  it('splits on a change of speaker and on pauses longer than the limit', () => {
    const labelled = assignSpeakers(words, [
      { start: 0, end: 2.45, speaker: 1 },
      { start: 2.45, end: 6, speaker: 2 },
    ]);
    assert.deepEqual(buildUtterances(labelled, 0.8), [
      { text: 'one two', start: 0, end: 0.9, speaker: 'speaker_0' },
      { text: 'three', start: 2.0, end: 2.4, speaker: 'speaker_0' },
      { text: 'four', start: 2.5, end: 2.9, speaker: 'speaker_1' },
      { text: 'five', start: 5.0, end: 5.4, speaker: 'speaker_1' },
    ]);
    assert.equal(buildUtterances(labelSingleSpeaker(words), 5).length, 1);
  });
});
