/**
 * No offline (non-streaming) model could be obtained for this project, so the decode path through
 * OfflineRecognizer.createAsync/decodeAsync is not exercised here; these tests cover the config
 * each pack kind produces (the shapes of sherpa's lib/types.js and nodejs-addon-examples) and the
 * mapping of sherpa's result JSON.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ModelPackError } from '../../../src/errors.js';
import { createOfflineRecognizer, emotionFromTag, languageFromTag, segmentFromOfflineResult } from '../../../src/engines/server/sherpa-offline-recognizer.js';
import type { ModelPack } from '../../../src/models/model-pack.js';
import { enginePackAs, enginePackOf, type PackKind } from '../../../src/models/families/index.js';

/** The config the pack's family builds, for a request in `language` when one is given. */
function buildOfflineRecognizerConfig(pack: ModelPack, options: { language?: string } = {}) {
  const { config, traits } = enginePackAs('offline-asr', pack);
  return options.language !== undefined && traits.forLanguage ? traits.forLanguage(config, options.language) : config;
}

/** A pack whose files exist (empty: the config builder only checks presence). */
function fakePack(kind: PackKind, roles: string[], languages = ['en']): ModelPack {
  const dir = mkdtempSync(path.join(tmpdir(), 'parley-offline-'));
  const files: Record<string, string> = {};
  for (const role of roles) {
    files[role] = path.join(dir, `${role}.onnx`);
    writeFileSync(files[role]!, '');
  }
  return { id: `test-${kind}`, dir, kind, files, languages, voices: [], metadata: {} };
}

describe('offline recogniser config', () => {
  it('names each family the way sherpa-onnx-node reads it', () => {
    const whisper = buildOfflineRecognizerConfig(fakePack('asr-whisper', ['encoder', 'decoder', 'tokens'], ['multi', 'en', 'de']), { language: 'multi' });
    assert.deepEqual(Object.keys(whisper.modelConfig.whisper!), ['encoder', 'decoder', 'language', 'task', 'tailPaddings']);
    assert.equal(whisper.modelConfig.whisper!.language, '', 'multi → empty language = detect');
    assert.equal(whisper.modelConfig.whisper!.task, 'transcribe');
    assert.equal(buildOfflineRecognizerConfig(fakePack('asr-whisper', ['encoder', 'decoder', 'tokens']), { language: 'de' }).modelConfig.whisper!.language, 'de');

    const parakeet = buildOfflineRecognizerConfig(fakePack('asr-nemo-transducer', ['encoder', 'decoder', 'joiner', 'tokens']));
    assert.equal(parakeet.modelConfig.modelType, 'nemo_transducer');
    assert.ok(parakeet.modelConfig.transducer!.joiner.endsWith('joiner.onnx'));

    const zipformer = buildOfflineRecognizerConfig(fakePack('asr-offline-transducer', ['encoder', 'decoder', 'joiner', 'tokens']));
    assert.equal(zipformer.modelConfig.modelType, undefined, 'zipformer transducers are detected by sherpa');

    const senseVoice = buildOfflineRecognizerConfig(fakePack('asr-sense-voice', ['model', 'tokens']));
    assert.deepEqual(senseVoice.modelConfig.senseVoice, { model: senseVoice.modelConfig.senseVoice!.model, language: '', useInverseTextNormalization: 1 });

    const moonshine = buildOfflineRecognizerConfig(fakePack('asr-moonshine', ['preprocessor', 'encoder', 'uncachedDecoder', 'cachedDecoder', 'tokens']));
    assert.deepEqual(Object.keys(moonshine.modelConfig.moonshine!), ['preprocessor', 'encoder', 'uncachedDecoder', 'cachedDecoder']);

    for (const [kind, field] of [
      ['asr-nemo-ctc', 'nemoCtc'],
      ['asr-zipformer-ctc', 'zipformerCtc'],
      ['asr-paraformer', 'paraformer'],
    ] as const) {
      const config = buildOfflineRecognizerConfig(fakePack(kind, ['model', 'tokens']));
      assert.ok(config.modelConfig[field]!.model.endsWith('model.onnx'), kind);
      assert.ok(config.modelConfig.tokens.endsWith('tokens.onnx'));
      assert.equal(config.featConfig.sampleRate, 16000);
      assert.equal(config.decodingMethod, 'greedy_search');
    }
  });

  it('passes the BPE vocabulary only when the pack has one (hotwords)', () => {
    const pack = fakePack('asr-offline-transducer', ['encoder', 'decoder', 'joiner', 'tokens', 'bpeVocab']);
    const config = buildOfflineRecognizerConfig(pack);
    assert.equal(config.modelConfig.modelingUnit, 'bpe');
    assert.equal(config.modelConfig.bpeVocab, pack.files.bpeVocab);
  });

  it('refuses a pack with a missing file or of another kind, before sherpa could end the process', async () => {
    const pack = fakePack('asr-moonshine', ['preprocessor', 'encoder', 'tokens']);
    assert.throws(() => buildOfflineRecognizerConfig(pack), (e: unknown) => e instanceof ModelPackError && /uncachedDecoder/.test(e.message));
    assert.throws(() => buildOfflineRecognizerConfig(fakePack('vad-silero', ['model', 'tokens'])), ModelPackError);
    const vad = enginePackOf(fakePack('vad-silero', ['model', 'tokens']));
    await assert.rejects(createOfflineRecognizer({ submit: () => Promise.reject(new Error('not reached')) }, vad as never), ModelPackError);
  });
});

describe('offline result mapping', () => {
  it('maps language and emotion tags', () => {
    assert.equal(languageFromTag('<|en|>'), 'en');
    assert.equal(languageFromTag('de'), 'de');
    assert.equal(languageFromTag('<|jw|>'), 'jv');
    assert.equal(languageFromTag('<|nospeech|>'), undefined);
    assert.equal(languageFromTag(''), undefined);
    assert.equal(emotionFromTag('<|HAPPY|>'), 'HAPPY');
    assert.equal(emotionFromTag('<|EMO_UNKNOWN|>'), undefined);
  });

  it('keeps token times only when there is one per token', () => {
    const senseVoice = segmentFromOfflineResult({
      text: ' hello world',
      tokens: ['▁hello', '▁world'],
      timestamps: [0.3, 0.7],
      durations: [],
      lang: '<|en|>',
      emotion: '<|NEUTRAL|>',
    });
    assert.deepEqual(senseVoice, { text: 'hello world', tokens: ['▁hello', '▁world'], timestamps: [0.3, 0.7], durations: [], language: 'en', emotion: 'NEUTRAL' });
    const parakeet = segmentFromOfflineResult({ text: 'hi', tokens: ['▁hi'], timestamps: [0.2], durations: [0.16] });
    assert.deepEqual(parakeet.durations, [0.16]);
    const whisper = segmentFromOfflineResult({ text: ' Hi there.', tokens: [' Hi', ' there', '.'], timestamps: [], lang: '<|en|>' });
    assert.deepEqual(whisper.timestamps, []);
    assert.equal(whisper.language, 'en');
  });
});
