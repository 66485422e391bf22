import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AcousticFeatures } from '../../src/voice-analysis/acoustic-features.js';
import { AcousticBaselineAnalyzer, classifyVoice, f0Likelihood, scoreEmotions } from '../../src/voice-analysis/acoustic-baseline.js';
import { ESPEAK_MISSING, speak } from './espeak-voices.js';
import { labelledClips, readWav } from './labelled-clips.js';
import { needs, REAL_TEST_MODELS } from '../helpers/models.js';

const NEEDS = needs({ corpus: true });

const ALL = { age: true, gender: true, emotions: true };
const AGES = ['infant', 'teenager', 'adult', 'old'];
const EMOTIONS = ['happiness', 'sadness', 'disgust', 'fear', 'anger'];

/** Features of neutral read speech by a voice of the given F0 and vocal-tract length. */
function features(f0: number, vocalTractCm: number, extra: Partial<AcousticFeatures> = {}): AcousticFeatures {
  return {
    speechSeconds: 3,
    voicedSeconds: 1.5,
    f0Median: f0,
    f0P10: f0 * 0.85,
    f0P90: f0 * 1.15,
    f0SdSemitones: 2.5,
    vocalTractCm,
    spectralCentroid: 500,
    alphaRatio: -15,
    syllableRate: 4,
    ...extra,
  };
}

describe('acoustic baseline rules', () => {
  it('classifies textbook voices', () => {
    assert.deepEqual(pick(classifyVoice(features(115, 17))), { gender: 'male', age: 'adult' });
    assert.deepEqual(pick(classifyVoice(features(205, 14.5))), { gender: 'female', age: 'adult' });
    assert.equal(classifyVoice(features(320, 12.5))?.age, 'teenager');
    assert.equal(classifyVoice(features(500, NaN))?.age, 'infant');
    // A 500 Hz scream from an adult-length vocal tract is not an infant.
    assert.notEqual(classifyVoice(features(500, 16.5))?.age, 'infant');
    // In the F0 overlap of men and women, the vocal-tract length decides.
    assert.equal(classifyVoice(features(160, 17.5))?.gender, 'male');
    assert.equal(classifyVoice(features(160, 14.0))?.gender, 'female');
  });

  it('lets the vocal-tract length decide when raised effort lifts F0 out of the normal range', () => {
    // A man shouting or acting joy an octave above his normal 115 Hz still has a male-length tract.
    assert.equal(classifyVoice(features(230, 17.5, { f0SdSemitones: 3 }))?.gender, 'male');
    assert.equal(classifyVoice(features(270, 17.0))?.gender, 'male');
    // A woman raised the same way stays a woman.
    assert.equal(classifyVoice(features(400, 14.5))?.gender, 'female');
    // A low F0 is not explained by effort: 100 Hz with an ambiguous tract is a man.
    assert.equal(classifyVoice(features(100, 15.75))?.gender, 'male');
  });

  it('spreads the F0 likelihood over normal and raised effort', () => {
    // A density in semitones: it integrates to 1.
    let total = 0;
    for (let x = -30; x <= 40; x += 0.01) total += f0Likelihood(x, 2) * 0.01;
    assert.ok(Math.abs(total - 1) < 1e-3, `integral ${total}`);
    // Symmetric tails would make +8 st as unlikely as −8 st; with raised effort it is far likelier.
    assert.ok(f0Likelihood(8, 2) > 100 * f0Likelihood(-8, 2));
    // At the class mean the normal-effort half dominates.
    assert.ok(f0Likelihood(0, 2) > f0Likelihood(6, 2));
  });

  it('never claims an age, gender or emotion from too little voiced speech', () => {
    assert.equal(classifyVoice(features(120, 17, { voicedSeconds: 0.1 })), undefined);
    assert.equal(classifyVoice(features(NaN, NaN)), undefined);
  });

  it('scores emotions in the directions of the vocal-affect literature', () => {
    const top = (e: object) => (Object.entries(e) as [string, number][]).sort((a, b) => b[1] - a[1])[0]![0];
    const neutral = scoreEmotions(features(115, 17), 'male');
    const sum = Object.values(neutral).reduce((s, v) => s + v, 0);
    assert.ok(sum < 0.5, `neutral speech gave ${sum} to the five emotions`);
    // High, varied, fast, effortful: anger.
    assert.equal(top(scoreEmotions(features(200, 17, { f0SdSemitones: 5, syllableRate: 4.5, alphaRatio: -8 }), 'male')), 'anger');
    // Low, flat, slow, soft: sadness.
    assert.equal(top(scoreEmotions(features(100, 17, { f0SdSemitones: 1, syllableRate: 3, alphaRatio: -19 }), 'male')), 'sadness');
    // High, flat, fast: fear.
    assert.equal(top(scoreEmotions(features(300, 14.5, { f0SdSemitones: 1.5, syllableRate: 5.5, alphaRatio: -13 }), 'female')), 'fear');
  });

  it('reports silence as nothing rather than a guess', async () => {
    const traits = await new AcousticBaselineAnalyzer().analyze(new Float32Array(16000), 16000, [{ start: 0, end: 1 }], ALL);
    assert.deepEqual(traits, { analyzers: {} });
  });

  it('tells the espeak-ng male and female voices apart', { skip: ESPEAK_MISSING }, async () => {
    const analyzer = new AcousticBaselineAnalyzer();
    for (const [voice, gender] of [['en+m3', 'male'], ['en+f3', 'female']] as const) {
      const { samples, sampleRate } = speak(voice, 'Please call Stella. Ask her to bring these things with her from the store.');
      const traits = await analyzer.analyze(samples, sampleRate, [{ start: 0, end: samples.length / sampleRate }], ALL);
      assert.equal(traits.gender, gender, voice);
      assert.equal(traits.age, 'adult', voice);
      assert.deepEqual(traits.analyzers, { age: 'acoustic-baseline', gender: 'acoustic-baseline', emotions: 'acoustic-baseline' });
    }
  });
});

describe('acoustic baseline on the labelled corpus clips', { skip: NEEDS }, () => {
  const analyzer = new AcousticBaselineAnalyzer();
  for (const clip of labelledClips()) {
    it(`${clip.file.split('/').slice(-2).join('/')}: values in their sets, deterministic`, async () => {
      const { samples, sampleRate } = readWav(clip.file);
      const spans = [{ start: 0, end: samples.length / sampleRate }];
      const first = await analyzer.analyze(samples, sampleRate, spans, ALL);
      assert.ok(AGES.includes(first.age!), `age ${first.age}`);
      assert.ok(first.gender === 'male' || first.gender === 'female', `gender ${first.gender}`);
      assert.deepEqual(Object.keys(first.emotions!).sort(), [...EMOTIONS].sort());
      let sum = 0;
      for (const name of EMOTIONS) {
        const score = first.emotions![name as keyof typeof first.emotions]!;
        assert.ok(score >= 0 && score <= 1, `${name} = ${score}`);
        sum += score;
      }
      assert.ok(sum <= 1.001, `emotion scores add up to ${sum}`);
      assert.deepEqual(await analyzer.analyze(samples, sampleRate, spans, ALL), first);
      // Only the fields asked for are answered.
      const genderOnly = await analyzer.analyze(samples, sampleRate, spans, { age: false, gender: true, emotions: false });
      assert.deepEqual(genderOnly, { gender: first.gender, analyzers: { gender: 'acoustic-baseline' } });
    });
  }
});

function pick(v: ReturnType<typeof classifyVoice>) {
  return v && { gender: v.gender, age: v.age };
}
