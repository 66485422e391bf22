import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEspeakNgEngine, espeakLanguages } from '../../../src/engines/server/espeak-ng-tts.js';
import type { SynthesisOptions, TtsEngine, Voice } from '../../../src/engines/types.js';
import { AbortedError, EngineError } from '../../../src/errors.js';
import { modelLanguages } from '../../../src/synthesis/languages.js';
import { sampleSentences } from '../../helpers/sentences.js';

/** One short sentence per language, in its own script, so eSpeak really reads that language. */
const sentences = sampleSentences;
const ttsV2Languages = modelLanguages['tts-v2'];

async function collect(chunks: AsyncIterable<Float32Array>): Promise<Float32Array> {
  const parts: Float32Array[] = [];
  for await (const c of chunks) parts.push(c);
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

function rms(x: Float32Array): number {
  let e = 0;
  for (const v of x) e += v * v;
  return Math.sqrt(e / Math.max(1, x.length));
}

/** Median F0 over voiced 40 ms frames, by plain autocorrelation between 60 and 400 Hz. */
function medianF0(x: Float32Array, sampleRate: number): number {
  const frame = Math.round(sampleRate * 0.04);
  const minLag = Math.floor(sampleRate / 400);
  const maxLag = Math.ceil(sampleRate / 60);
  const estimates: number[] = [];
  for (let s = 0; s + frame + maxLag < x.length; s += frame) {
    const energy = rms(x.subarray(s, s + frame));
    if (energy < 0.02) continue;
    let bestLag = 0;
    let best = 0;
    for (let lag = minLag; lag <= maxLag; lag++) {
      let c = 0;
      for (let i = 0; i < frame; i++) c += x[s + i]! * x[s + i + lag]!;
      if (c > best) {
        best = c;
        bestLag = lag;
      }
    }
    if (bestLag > 0) estimates.push(sampleRate / bestLag);
  }
  estimates.sort((a, b) => a - b);
  return estimates[Math.floor(estimates.length / 2)] ?? 0;
}

const opts = (language: string, extra: Partial<SynthesisOptions> = {}): SynthesisOptions => ({ speed: 1, language, ...extra });

describe('eSpeak NG engine', () => {
  let engine: TtsEngine;
  let voices: Voice[];
  const byId = (id: string): Voice => {
    const v = voices.find((x) => x.id === id);
    assert.ok(v, `voice ${id} listed`);
    return v;
  };

  before(async () => {
    engine = await createEspeakNgEngine({ workers: 2 });
    voices = engine.listVoices();
  });
  after(async () => {
    await engine.close();
  });

  it('lists a male and a female voice for every tts-v2 language', () => {
    for (const language of ttsV2Languages) {
      for (const gender of ['male', 'female'] as const) {
        const v = voices.find((x) => x.languages[0] === language && x.gender === gender);
        assert.ok(v, `${language} ${gender}`);
        assert.equal(v.engine, 'espeak-ng');
        assert.equal(v.sampleRate, 22050);
        assert.deepEqual(v.models, ['tts-large', 'tts-v2', 'tts-v3.1']);
      }
    }
    const en = byId('espeak-en-us-male');
    assert.deepEqual(en.languages, ['en', 'en-US']);
    assert.equal(en.accent, 'american');
    assert.equal(en.displayName, 'eSpeak English (US) — male');
    assert.equal(byId('espeak-hi-female').accent, 'indian');
    assert.equal(new Set(voices.map((v) => v.id)).size, voices.length, 'ids are unique');
    assert.equal(voices.length, espeakLanguages.length * 2);
  });

  it('speaks every voice: audible audio of plausible length, female higher than male', async () => {
    for (const entry of espeakLanguages) {
      const language = entry.languages[0]!;
      const text = sentences[language]!;
      const f0: Record<string, number> = {};
      for (const gender of ['male', 'female'] as const) {
        const voice = byId(`espeak-${entry.slug}-${gender}`);
        const audio = await collect(engine.synthesize(voice, text, opts(language)));
        const seconds = audio.length / voice.sampleRate;
        assert.ok(seconds > 0.8 && seconds < 8, `${voice.id}: ${seconds.toFixed(2)} s`);
        assert.ok(rms(audio) > 0.02, `${voice.id}: rms ${rms(audio)}`);
        f0[gender] = medianF0(audio, voice.sampleRate);
      }
      assert.ok(f0.female! > f0.male! * 1.3, `${entry.slug}: F0 male ${f0.male} female ${f0.female}`);
    }
  });

  it('speed 2 is clearly shorter than speed 0.5', async () => {
    const voice = byId('espeak-en-us-female');
    const text = 'The quick brown fox jumps over the lazy dog near the river bank.';
    const slow = await collect(engine.synthesize(voice, text, opts('en', { speed: 0.5 })));
    const normal = await collect(engine.synthesize(voice, text, opts('en')));
    const fast = await collect(engine.synthesize(voice, text, opts('en', { speed: 2 })));
    assert.ok(fast.length < normal.length && normal.length < slow.length);
    assert.ok(fast.length < slow.length * 0.5, `fast ${fast.length} slow ${slow.length}`);
  });

  it('says where it started each word: positions in the text as given (markup characters too), times rising within the audio', async () => {
    const voice = byId('espeak-en-us-male');
    const text = 'Salt & pepper <now>, please.';
    let marks: { start: number; length: number; seconds: number }[] | undefined;
    const audio = await collect(engine.synthesize(voice, text, opts('en', { onWords: (words) => (marks = words) })));
    assert.ok(marks, 'word marks were reported');
    const words = marks.map((m) => text.slice(m.start, m.start + m.length));
    for (const word of ['Salt', 'pepper', 'now', 'please']) assert.ok(words.includes(word), `${word} in ${JSON.stringify(words)}`);
    for (const [i, m] of marks.entries()) {
      assert.ok(m.seconds >= 0 && m.seconds < audio.length / voice.sampleRate, JSON.stringify(m));
      if (i > 0) assert.ok(m.seconds > marks[i - 1]!.seconds, 'later words later');
    }
  });

  it('reads digits in the voice language', async () => {
    const en = await collect(engine.synthesize(byId('espeak-en-us-male'), '1234567', opts('en')));
    const short = await collect(engine.synthesize(byId('espeak-en-us-male'), '7', opts('en')));
    // "one million two hundred thirty four thousand..." is far longer than "seven".
    assert.ok(en.length > short.length * 4);
  });

  it('streams a long text in several chunks and stops on abort', async () => {
    const voice = byId('espeak-en-us-male');
    const text = Array.from({ length: 40 }, (_, i) => `This is sentence number ${i + 1}, which goes on for a while.`).join(' ');
    const controller = new AbortController();
    let received = 0;
    let afterAbort = 0;
    await assert.rejects(async () => {
      for await (const chunk of engine.synthesize(voice, text, opts('en', { signal: controller.signal }))) {
        assert.ok(chunk.length > 0);
        if (controller.signal.aborted) afterAbort++;
        received++;
        if (received === 2) controller.abort();
      }
    }, AbortedError);
    assert.equal(received, 2);
    assert.equal(afterAbort, 0);
    // The worker is free again: both workers serve new requests.
    const again = await Promise.all([
      collect(engine.synthesize(voice, 'Still here.', opts('en'))),
      collect(engine.synthesize(voice, 'Me too.', opts('en'))),
    ]);
    for (const a of again) assert.ok(a.length > 0);
  });

  it('hands over the first ~0.1 s of a text at once, then pieces of up to a second', async () => {
    const voice = byId('espeak-en-us-female');
    const pieces: number[] = [];
    for await (const chunk of engine.synthesize(voice, 'The morning train left the station a few minutes late, and most of the passengers did not seem to mind.', opts('en'))) {
      pieces.push(chunk.length / voice.sampleRate);
    }
    assert.ok(pieces.length >= 3, `pieces ${pieces.map((p) => p.toFixed(2)).join(', ')} s`);
    assert.ok(pieces[0]! > 0 && pieces[0]! <= 0.15, `first piece ${pieces[0]} s`);
    assert.ok(pieces.every((p) => p <= 1.1), `pieces ${pieces.map((p) => p.toFixed(2)).join(', ')} s`);
    assert.ok(Math.max(...pieces) > 0.5, 'later pieces are bigger, so messages stay few');
  });

  it('rejects a signal that is already aborted, and an unknown voice', async () => {
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(collect(engine.synthesize(byId('espeak-de-male'), 'Hallo.', opts('de', { signal: controller.signal }))), AbortedError);
    const foreign: Voice = { ...byId('espeak-de-male'), id: 'espeak-xx-male' };
    await assert.rejects(collect(engine.synthesize(foreign, 'Hallo.', opts('de'))), EngineError);
  });

  it('serves more requests than workers, in parallel calls', async () => {
    const voice = byId('espeak-fr-female');
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => collect(engine.synthesize(voice, `Phrase numéro ${i + 1}.`, opts('fr')))),
    );
    for (const r of results) assert.ok(r.length > 22050 * 0.5);
  });

  it('keeps the event loop running during a long synthesis', async () => {
    const voice = byId('espeak-en-us-male');
    // One long clause: eSpeak synthesises it in one synchronous call.
    const text = Array.from({ length: 120 }, (_, i) => `word${i % 10} and another`).join(' ');
    let last = performance.now();
    let maxGap = 0;
    let ticks = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      maxGap = Math.max(maxGap, now - last);
      last = now;
      ticks++;
    }, 5);
    const started = performance.now();
    try {
      await collect(engine.synthesize(voice, text, opts('en')));
    } finally {
      clearInterval(timer);
    }
    const elapsed = performance.now() - started;
    // Compared with the synthesis time itself, not a fixed budget: if synthesis ran on this
    // thread, the longest gap would be about as long as the whole synthesis.
    assert.ok(ticks >= 5, `ticks ${ticks} in ${elapsed.toFixed(0)} ms`);
    assert.ok(maxGap < elapsed / 2, `max gap ${maxGap.toFixed(0)} ms of ${elapsed.toFixed(0)} ms`);
  });
});
