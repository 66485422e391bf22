import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  speakerClassScores,
  traitsFromSpeakerScores,
  type AudioEvent,
} from '../../src/voice-analysis/audio-tagging.js';
import { emotionsFromTags } from '../../src/voice-analysis/sense-voice-emotion.js';
import {
  analyzeSpeakers,
  createSpeakerAnalysis,
  dominantSpeaker,
  mergeSpans,
} from '../../src/voice-analysis/speaker-analysis.js';
import { ESPEAK_MISSING, speak } from './espeak-voices.js';

const ALL = { age: true, gender: true, emotions: true };

describe('SenseVoice emotion tags', () => {
  it('scores each emotion by its share of tagged speech time', () => {
    const e = emotionsFromTags([
      { start: 0, end: 3, emotion: '<|HAPPY|>' },
      { start: 3, end: 4, emotion: 'ANGRY' },
      { start: 4, end: 8, emotion: 'NEUTRAL' },
      { start: 8, end: 10, emotion: 'sad' },
    ]);
    assert.deepEqual(e, { happiness: 0.3, sadness: 0.2, disgust: 0, fear: 0, anger: 0.1 });
  });

  it('counts only the part of a tag inside the speaker spans', () => {
    const e = emotionsFromTags([{ start: 0, end: 4, emotion: 'FEARFUL' }, { start: 4, end: 8, emotion: 'DISGUSTED' }], [{ start: 3, end: 5 }]);
    assert.deepEqual(e, { happiness: 0, sadness: 0, disgust: 0.5, fear: 0.5, anger: 0 });
    assert.equal(emotionsFromTags([{ start: 0, end: 1, emotion: 'HAPPY' }], [{ start: 2, end: 3 }]), undefined);
  });
});

describe('audio-tagging mapping (AudioSet classes → age and gender)', () => {
  const events = (probs: Record<string, number>): AudioEvent[] =>
    [['Speech', 0.9], ...Object.entries(probs)].map(([name, prob], index) => ({ name: String(name), prob: Number(prob), index }));

  it('reads the speaker classes by their ontology names', () => {
    const s = speakerClassScores(events({ 'Male speech, man speaking': 0.4, 'female speech, woman speaking': 0.1, Babbling: 0.02 }));
    assert.deepEqual(s, { male: 0.4, female: 0.1, child: 0, babyCry: 0, babbling: 0.02 });
  });

  it('maps scores to fields', () => {
    assert.deepEqual(traitsFromSpeakerScores({ male: 0.4, female: 0.1, child: 0.05, babyCry: 0, babbling: 0 }), { age: 'adult', gender: 'male' });
    assert.deepEqual(traitsFromSpeakerScores({ male: 0.1, female: 0.3, child: 0.2, babyCry: 0, babbling: 0 }), { age: 'adult', gender: 'female' });
    assert.deepEqual(traitsFromSpeakerScores({ male: 0.05, female: 0.1, child: 0.5, babyCry: 0, babbling: 0 }), { age: 'teenager', gender: 'female' });
    assert.deepEqual(traitsFromSpeakerScores({ male: 0, female: 0.02, child: 0.1, babyCry: 0.6, babbling: 0.1 }), { age: 'infant' });
    // No class above the evidence floor: nothing, so another analyzer answers.
    assert.deepEqual(traitsFromSpeakerScores({ male: 0.01, female: 0.02, child: 0.01, babyCry: 0, babbling: 0 }), {});
  });
});

describe('createSpeakerAnalysis picks a backend per field', () => {
  const tone = (seconds: number) => {
    // A voiced 120 Hz pulse train, enough for the baseline to answer.
    const rate = 16000;
    const out = new Float32Array(seconds * rate);
    for (let i = 0; i < out.length; i++) out[i] = 0.3 * (2 * (((120 * i) / rate) % 1) - 1);
    return out;
  };

  it('uses SenseVoice tags for emotions when given, the baseline for the rest', async () => {
    const traits = await createSpeakerAnalysis().analyze(tone(2), 16000, [{ start: 0, end: 2 }], ALL, {
      emotionTags: [{ start: 0, end: 2, emotion: 'HAPPY' }],
    });
    assert.deepEqual(traits.emotions, { happiness: 1, sadness: 0, disgust: 0, fear: 0, anger: 0 });
    assert.deepEqual(traits.analyzers, { emotions: 'sense-voice-emotion', age: 'acoustic-baseline', gender: 'acoustic-baseline' });
  });

  it('uses the audio tagger for age and gender when it has evidence, and falls back when it fails', async () => {
    const run = async (): Promise<AudioEvent[]> => [
      { name: 'Speech', prob: 0.9, index: 0 },
      { name: 'Female speech, woman speaking', prob: 0.3, index: 1 },
    ];
    const tagged = await createSpeakerAnalysis({ audioTagging: run }).analyze(tone(2), 16000, [{ start: 0, end: 2 }], ALL);
    assert.equal(tagged.gender, 'female');
    assert.deepEqual(tagged.analyzers, { age: 'audio-tagging', gender: 'audio-tagging', emotions: 'acoustic-baseline' });

    const failures: string[] = [];
    const broken = createSpeakerAnalysis({
      audioTagging: async () => {
        throw new Error('worker gone');
      },
      onFallback: (analyzer) => failures.push(analyzer),
    });
    const fallback = await broken.analyze(tone(2), 16000, [{ start: 0, end: 2 }], { age: true, gender: true, emotions: false });
    assert.deepEqual(failures, ['audio-tagging']);
    assert.deepEqual(fallback.analyzers, { age: 'acoustic-baseline', gender: 'acoustic-baseline' });
  });
});

describe('per-speaker analysis', () => {
  it('merges spans and finds the dominant speaker', () => {
    assert.deepEqual(mergeSpans([{ start: 2, end: 3 }, { start: 0, end: 1 }, { start: 0.5, end: 1.5 }]), [
      { start: 0, end: 1.5 },
      { start: 2, end: 3 },
    ]);
    const turns = [
      { start: 0, end: 1, speaker: 'speaker_0' },
      { start: 1, end: 4, speaker: 'speaker_1' },
      { start: 4, end: 5, speaker: 'speaker_0' },
    ];
    assert.equal(dominantSpeaker(turns), 'speaker_1');
    assert.equal(dominantSpeaker([]), undefined);
  });

  it('analyses each diarized speaker on their own turns', { skip: ESPEAK_MISSING }, async () => {
    const man = speak('en+m3', 'Please call Stella. Ask her to bring these things with her from the store.');
    const woman = speak('en+f3', 'Six spoons of fresh snow peas, five thick slabs of blue cheese.');
    assert.equal(man.sampleRate, woman.sampleRate);
    const rate = man.sampleRate;
    const joined = new Float32Array(man.samples.length + woman.samples.length);
    joined.set(man.samples);
    joined.set(woman.samples, man.samples.length);
    const cut = man.samples.length / rate;
    const turns = [
      { start: 0, end: cut, speaker: 'speaker_0' },
      { start: cut, end: joined.length / rate, speaker: 'speaker_1' },
    ];
    const result = await analyzeSpeakers(createSpeakerAnalysis(), joined, rate, turns, ALL, {
      emotionTags: [{ start: cut + 0.5, end: cut + 1.5, emotion: 'SAD' }],
    });
    assert.equal(result.dominant, 'speaker_0');
    assert.deepEqual(result.speakers.map((s) => [s.speaker, s.traits.gender]), [
      ['speaker_0', 'male'],
      ['speaker_1', 'female'],
    ]);
    // The SAD tag lies in speaker_1's turn only.
    assert.equal(result.speakers[0]!.traits.analyzers.emotions, 'acoustic-baseline');
    assert.equal(result.speakers[1]!.traits.emotions?.sadness, 1);
  });
});
