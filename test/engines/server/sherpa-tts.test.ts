import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { InferenceCore } from '../../../src/engines/inference/inference-core.js';
import { loadSherpaOnnx } from '../../../src/engines/sherpa-onnx.js';
import { buildPackVoices, createSherpaTtsEngine, createZeroShotTtsEngine } from '../../../src/engines/server/sherpa-tts.js';
import { enginePackAs, enginePackOf } from '../../../src/models/families/index.js';
import type { SynthesisOptions, TtsEngine, Voice } from '../../../src/engines/types.js';
import { AbortedError, EngineError } from '../../../src/errors.js';
import type { ModelPack } from '../../../src/models/model-pack.js';
import { fixtureModelsDir } from '../../helpers/models.js';

const modelsDir = fixtureModelsDir;

/** A hand-built pack for the synthetic Piper fixtures (see their READMEs). */
/** The config the pack's family builds; `accent` picks the config of that accent's voices. */
function buildOfflineTtsConfig(pack: ModelPack, options: { espeakDataDir?: string } = {}, accent?: string) {
  const built = enginePackOf(pack, options);
  if (built.capability === 'tts' && accent) return built.traits.accentConfigs[accent]!;
  if (built.capability !== 'tts' && built.capability !== 'zero-shot-tts') throw new Error(`${pack.id} is not a TTS pack`);
  return built.config;
}

function fixturePack(id: string, extra: Partial<ModelPack> = {}): ModelPack {
  const dir = join(modelsDir, id);
  return {
    id,
    dir,
    kind: 'tts-vits',
    files: { model: join(dir, 'model.onnx'), tokens: join(dir, 'tokens.txt') },
    languages: ['en'],
    voices: [],
    metadata: { voice: 'en-us' },
    ...extra,
  };
}

const onePack = fixturePack('fake-piper-tones-en_US-16k');
const twoPack = fixturePack('fake-piper-tones-en_US-22k-2spk', {
  voices: [{ speakerId: 1, displayName: 'Second speaker', gender: 'female' }],
});

const threeSentences = 'The first sentence is here. Then comes a second, longer sentence with more words. And a third one.';

async function collect(chunks: AsyncIterable<Float32Array>): Promise<Float32Array[]> {
  const parts: Float32Array[] = [];
  for await (const c of chunks) parts.push(c);
  return parts;
}

function join32(parts: Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** Mean frequency of the audible part, from zero crossings (the fixtures emit pure tones). */
function meanFrequency(x: Float32Array, sampleRate: number): number {
  let crossings = 0;
  let voiced = 0;
  for (let i = 1; i < x.length; i++) {
    if (Math.abs(x[i]!) > 1e-4 || Math.abs(x[i - 1]!) > 1e-4) voiced++;
    if ((x[i - 1]! < 0 && x[i]! >= 0) || (x[i - 1]! >= 0 && x[i]! < 0)) crossings++;
  }
  return crossings / 2 / (voiced / sampleRate);
}

/**
 * Spies on the real sherpa generateAsync (same module instance as the engine's): logs 'sentence'
 * each time sherpa reports a finished sentence through onProgress. Tests add their own entries.
 */
function spyOnSherpaProgress(): { events: string[]; restore: () => void } {
  type Request = { onProgress?: (info: unknown) => unknown };
  const sherpa = loadSherpaOnnx() as unknown as {
    OfflineTts: { prototype: { generateAsync: (req: Request) => Promise<unknown> } };
  };
  const proto = sherpa.OfflineTts.prototype;
  const original = proto.generateAsync;
  const events: string[] = [];
  proto.generateAsync = function (this: unknown, req: Request) {
    const inner = req.onProgress;
    return original.call(this, {
      ...req,
      onProgress: (info: unknown) => {
        events.push('sentence');
        return inner?.(info);
      },
    });
  };
  return { events, restore: () => (proto.generateAsync = original) };
}

const opts = (extra: Partial<SynthesisOptions> = {}): SynthesisOptions => ({ speed: 1, language: 'en', ...extra });

describe('sherpa-onnx TTS engine', () => {
  let engine: TtsEngine;
  let core: InferenceCore;
  let voices: Voice[];
  const byId = (id: string): Voice => {
    const v = voices.find((x) => x.id === id);
    assert.ok(v, `voice ${id} listed`);
    return v;
  };

  before(async () => {
    // In this process, so the spy below sees sherpa's calls; the server runs the same core in a child.
    core = new InferenceCore({ workers: 1 });
    engine = await createSherpaTtsEngine(core, [onePack, twoPack].map((p) => enginePackAs('tts', p, { numThreads: 1 })));
    voices = engine.listVoices();
  });
  after(async () => {
    await engine?.close();
    await core?.close();
  });

  it('builds the vits config with the shared espeak-ng-data and one sentence per batch', () => {
    const config = buildOfflineTtsConfig(onePack, { espeakDataDir: '/data/espeak' });
    assert.deepEqual(config.model.vits, { model: onePack.files.model, tokens: onePack.files.tokens, dataDir: '/data/espeak' });
    assert.equal(config.maxNumSentences, 1);
    const own = buildOfflineTtsConfig(fixturePack('x', { files: { ...onePack.files, dataDir: '/pack/espeak-ng-data' } }));
    assert.equal(own.model.vits?.dataDir, '/pack/espeak-ng-data');
    const lexicon = buildOfflineTtsConfig(fixturePack('y', { files: { ...onePack.files, lexicon: '/pack/lexicon.txt' } }));
    assert.deepEqual([lexicon.model.vits?.lexicon, lexicon.model.vits?.dataDir], ['/pack/lexicon.txt', undefined]);
    assert.throws(() => buildOfflineTtsConfig(fixturePack('z', { kind: 'tts-kokoro' })), EngineError);
  });

  it('lists one voice per speaker with the model sample rate', () => {
    assert.deepEqual(
      voices.map((v) => v.id),
      ['fake-piper-tones-en_US-16k', 'fake-piper-tones-en_US-22k-2spk-0', 'fake-piper-tones-en_US-22k-2spk-1'],
    );
    const single = byId('fake-piper-tones-en_US-16k');
    assert.equal(single.sampleRate, 16000);
    assert.deepEqual(single.languages, ['en']);
    assert.equal(single.engine, 'sherpa-vits');
    assert.equal(single.accent, 'american');
    const second = byId('fake-piper-tones-en_US-22k-2spk-1');
    assert.equal(second.sampleRate, 22050);
    assert.equal(second.displayName, 'Second speaker');
    assert.equal(second.gender, 'female');
    assert.equal(byId('fake-piper-tones-en_US-22k-2spk-0').gender, 'neutral');
  });

  it('yields one piece per sentence, the first before the last sentence is generated', async () => {
    const spy = spyOnSherpaProgress();
    const events = spy.events;
    const pieces: Float32Array[] = [];
    try {
      for await (const piece of engine.synthesize(byId('fake-piper-tones-en_US-16k'), threeSentences, opts())) {
        events.push('piece');
        pieces.push(piece);
      }
    } finally {
      spy.restore();
    }
    assert.equal(pieces.length, 3);
    for (const p of pieces) assert.ok(p.length > 0);
    assert.equal(events.filter((e) => e === 'sentence').length, 3);
    const firstPiece = events.indexOf('piece');
    const lastSentence = events.lastIndexOf('sentence');
    assert.ok(firstPiece < lastSentence, events.join(','));
    // The middle sentence has the most phonemes, so the longest tone sequence.
    assert.ok(pieces[1]!.length > pieces[0]!.length && pieces[1]!.length > pieces[2]!.length);
  });

  it('speaker 1 is 40 Hz above speaker 0', async () => {
    const text = 'Hello world.';
    const f = [];
    for (const id of ['fake-piper-tones-en_US-22k-2spk-0', 'fake-piper-tones-en_US-22k-2spk-1']) {
      const audio = join32(await collect(engine.synthesize(byId(id), text, opts())));
      assert.ok(audio.length > 0);
      f.push(meanFrequency(audio, 22050));
    }
    const shift = f[1]! - f[0]!;
    assert.ok(shift > 25 && shift < 55, `speaker 0 ${f[0]} Hz, speaker 1 ${f[1]} Hz`);
  });

  it('speed changes the length', async () => {
    const voice = byId('fake-piper-tones-en_US-16k');
    const slow = join32(await collect(engine.synthesize(voice, threeSentences, opts({ speed: 0.5 }))));
    const fast = join32(await collect(engine.synthesize(voice, threeSentences, opts({ speed: 2 }))));
    assert.ok(fast.length < slow.length * 0.4, `fast ${fast.length} slow ${slow.length}`);
  });

  it('stops on abort: throws AbortedError and yields nothing more', async () => {
    const voice = byId('fake-piper-tones-en_US-22k-2spk-0');
    const text = Array.from({ length: 20 }, (_, i) => `Sentence number ${i + 1} is here.`).join(' ');
    const controller = new AbortController();
    let received = 0;
    const spy = spyOnSherpaProgress();
    try {
      await assert.rejects(async () => {
        for await (const _ of engine.synthesize(voice, text, opts({ signal: controller.signal }))) {
          received++;
          controller.abort();
        }
      }, AbortedError);
      // Let sherpa reach its next sentence boundary, where onProgress tells it to stop.
      await collect(engine.synthesize(voice, 'Queued behind the aborted one.', opts()));
    } finally {
      spy.restore();
    }
    assert.equal(received, 1);
    // 20 sentences, 1 for the follow-up: sherpa stopped long before the end of the aborted text.
    assert.ok(spy.events.length < 10, `sherpa reported ${spy.events.length} sentences`);
    // The model is free again for the next request.
    const next = await collect(engine.synthesize(voice, 'Still working.', opts()));
    assert.equal(next.length, 1);
  });

  it('rejects an already aborted signal and a voice it does not serve', async () => {
    const controller = new AbortController();
    controller.abort();
    const voice = byId('fake-piper-tones-en_US-16k');
    await assert.rejects(collect(engine.synthesize(voice, 'Hi.', opts({ signal: controller.signal }))), AbortedError);
    await assert.rejects(collect(engine.synthesize({ ...voice, id: 'nope' }, 'Hi.', opts())), EngineError);
  });

  it('serves parallel requests to one model one after another, each complete', async () => {
    const voice = byId('fake-piper-tones-en_US-16k');
    const [a, b] = await Promise.all([
      collect(engine.synthesize(voice, threeSentences, opts())),
      collect(engine.synthesize(voice, threeSentences, opts())),
    ]);
    assert.equal(a.length, 3);
    assert.deepEqual(join32(a), join32(b));
  });
});

describe('Kokoro packs', () => {
  const kokoro = fixturePack('kokoro-multi-lang-v1_0', {
    kind: 'tts-kokoro',
    files: {
      model: '/k/model.onnx',
      voices: '/k/voices.bin',
      tokens: '/k/tokens.txt',
      lexicon: '/k/lexicon-us-en.txt,/k/lexicon-zh.txt',
      lexiconGb: '/k/lexicon-gb-en.txt,/k/lexicon-zh.txt',
      ruleFsts: '/k/phone-zh.fst,/k/date-zh.fst,/k/number-zh.fst',
    },
    languages: ['en', 'zh'],
    voices: [
      { speakerId: 0, id: 'af_alloy', accent: 'us', languages: ['en'] },
      { speakerId: 1, id: 'bf_alice', accent: 'gb', languages: ['en'] },
      { speakerId: 2, id: 'ef_dora', languages: ['es'], omit: true },
    ],
  });

  it('passes the lexicons in upstream order, the gb one first for British voices, and the rule FSTs', () => {
    const us = buildOfflineTtsConfig(kokoro, { espeakDataDir: '/data/espeak' });
    assert.equal(us.model.kokoro?.lexicon, '/k/lexicon-us-en.txt,/k/lexicon-zh.txt');
    assert.equal(us.ruleFsts, '/k/phone-zh.fst,/k/date-zh.fst,/k/number-zh.fst');
    const gb = buildOfflineTtsConfig(kokoro, { espeakDataDir: '/data/espeak' }, 'gb');
    assert.equal(gb.model.kokoro?.lexicon, '/k/lexicon-gb-en.txt,/k/lexicon-zh.txt');
  });

  it('offers no voice for an omitted speaker, and keeps the other speaker ids', () => {
    const voices = buildPackVoices(enginePackAs('tts', kokoro), 4, 24000);
    assert.deepEqual(
      voices.map((v) => [v.id, v.languages.join('+')]),
      [
        ['af_alloy', 'en'],
        ['bf_alice', 'en'],
        ['kokoro-multi-lang-v1_0-3', 'en+zh'],
      ],
    );
  });
});

describe('zero-shot packs', () => {
  const zipvoiceDir = join(modelsDir, 'fake-zipvoice-envelope-24k');
  const zipvoice: ModelPack = {
    id: 'fake-zipvoice-envelope-24k',
    dir: zipvoiceDir,
    kind: 'tts-zipvoice',
    files: {
      encoder: join(zipvoiceDir, 'encoder.onnx'),
      decoder: join(zipvoiceDir, 'decoder.onnx'),
      vocoder: join(zipvoiceDir, 'vocos_24khz.onnx'),
      tokens: join(zipvoiceDir, 'tokens.txt'),
      lexicon: join(zipvoiceDir, 'lexicon.txt'),
    },
    languages: ['en'],
    voices: [],
    metadata: {},
  };
  let core: InferenceCore;
  before(() => {
    core = new InferenceCore({ workers: 1 });
  });
  after(() => core.close());

  it('builds the ZipVoice config with upstream defaults and the shared espeak-ng-data, and the Pocket TTS config', () => {
    const config = buildOfflineTtsConfig(zipvoice, { espeakDataDir: '/data/espeak' });
    assert.deepEqual(config.model.zipvoice, {
      ...zipvoice.files,
      dataDir: '/data/espeak',
      featScale: 0.1,
      tShift: 0.5,
      targetRms: 0.1,
      guidanceScale: 1,
    });
    const own = buildOfflineTtsConfig({ ...zipvoice, files: { ...zipvoice.files, dataDir: '/pack/espeak-ng-data' } });
    assert.equal(own.model.zipvoice?.dataDir, '/pack/espeak-ng-data');
    const { lexicon: _, ...noLexicon } = zipvoice.files;
    assert.throws(() => buildOfflineTtsConfig({ ...zipvoice, files: noLexicon }), /has no "lexicon" file/);

    const pocketFiles = { lmFlow: '/p/lm_flow.int8.onnx', lmMain: '/p/lm_main.int8.onnx', encoder: '/p/encoder.onnx', decoder: '/p/decoder.int8.onnx', textConditioner: '/p/text_conditioner.onnx', vocabJson: '/p/vocab.json', tokenScoresJson: '/p/token_scores.json' };
    const pocket = buildOfflineTtsConfig({ ...zipvoice, id: 'pocket', kind: 'tts-pocket', files: pocketFiles });
    assert.deepEqual(pocket.model.pocket, pocketFiles);
    assert.equal(pocket.maxNumSentences, 1);
  });

  it('speaks in the voice of each request’s reference sample', async () => {
    const engine = await createZeroShotTtsEngine(core, enginePackAs('zero-shot-tts', zipvoice));
    assert.deepEqual([engine.name, engine.sampleRate, engine.needsReferenceText], ['zipvoice', 24000, true]);
    await assert.rejects(createSherpaTtsEngine(core, [enginePackOf(zipvoice) as never]), /not a TTS pack/);
    const tone = (hz: number) => {
      const samples = new Float32Array(16000 * 2);
      for (let i = 0; i < samples.length; i++) samples[i] = 0.3 * Math.sin((2 * Math.PI * hz * i) / 16000);
      return { samples, sampleRate: 16000, text: 'Hello.' };
    };
    const low = join32(await collect(engine.synthesize(tone(200), threeSentences, { speed: 1 })));
    const high = join32(await collect(engine.synthesize(tone(400), threeSentences, { speed: 1 })));
    assert.ok(low.length > 24000, 'more than a second of audio');
    const ratio = meanFrequency(high, 24000) / meanFrequency(low, 24000);
    assert.ok(Math.abs(ratio - 2) < 0.2, `a reference an octave higher speaks ${ratio.toFixed(2)} times higher`);
    const faster = join32(await collect(engine.synthesize(tone(200), threeSentences, { speed: 2 })));
    assert.ok(faster.length < low.length * 0.6, 'speed shortens it');
    // A reference whose words give no tokens makes sherpa answer with silence: an error here.
    await assert.rejects(collect(engine.synthesize({ ...tone(200), text: '' }, 'Hello there.', { speed: 1 })), /produced no audio/);
    await engine.close();
  });
});
