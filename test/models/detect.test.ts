import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { languageCode, scanModelPacks } from '../../src/models/detect.js';
import { REAL_TEST_MODELS, modelsDirWith, needs, sharedModel } from '../helpers/models.js';
import { SHARED_PACKS } from './fixtures.js';
import type { ModelPack } from '../../src/models/model-pack.js';
import { enginePackOf } from '../../src/models/families/index.js';

/** The engine config a punctuation pack's family builds. */
const buildPunctuationConfig = (pack: ModelPack) => enginePackOf(pack).config;

const NEEDS_REAL = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH] });


const base = (file: string | undefined) => (file ? path.basename(file) : undefined);

describe('scanModelPacks', () => {
  it('recognises the six shared packs through symlinks', { skip: NEEDS_REAL }, async () => {
    const dir = modelsDirWith(SHARED_PACKS);
    const { packs, problems } = await scanModelPacks(dir);
    assert.deepEqual(problems, []);
    const byId = new Map(packs.map((p) => [p.id, p]));
    assert.equal(packs.length, 6);

    const vad = byId.get('silero-vad-v5')!;
    assert.equal(vad.kind, 'vad-silero');
    assert.equal(base(vad.files.model), 'silero_vad.onnx');
    assert.equal(vad.dir, path.join(dir, 'silero-vad-v5'));

    const kws = byId.get('sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01-mobile')!;
    assert.equal(kws.kind, 'asr-online-transducer');
    assert.deepEqual(Object.keys(kws.files).sort(), ['bpeModel', 'bpeVocab', 'decoder', 'encoder', 'joiner', 'tokens']);
    assert.equal(kws.hotwords, true, 'the zipformer family declares a transducer with its BPE files able to boost keywords');
    assert.equal(base(kws.files.encoder), 'encoder-epoch-12-avg-2-chunk-16-left-64.int8.patched.onnx');
    assert.equal(base(kws.files.joiner), 'joiner-epoch-12-avg-2-chunk-16-left-64.int8.onnx');
    assert.deepEqual(kws.languages, ['en']);

    const piper = byId.get('fake-piper-tones-en_US-16k')!;
    assert.equal(piper.kind, 'tts-vits');
    // model.onnx, not model-no-metadata.onnx
    assert.equal(base(piper.files.model), 'model.onnx');
    assert.equal(base(piper.files.tokens), 'tokens.txt');
    assert.equal(piper.files.dataDir, undefined);
    assert.deepEqual(piper.languages, ['en']);
    assert.equal(piper.metadata.sample_rate, '16000');
    assert.equal(byId.get('fake-piper-tones-en_US-22k-2spk')!.metadata.n_speakers, '2');

    assert.equal(byId.get('fake-pyannote-segmentation-energy')!.kind, 'diarization-segmentation');
    assert.equal(byId.get('handmade-fbank-stats-speaker-embedding')!.kind, 'speaker-embedding');
  });

  it('lets pack.json override detection, reports junk as problems, ignores dot folders', async () => {
    const dir = modelsDirWith(['fake-piper-tones-en_US-16k']);
    const piperDir = sharedModel('fake-piper-tones-en_US-16k');
    const custom = path.join(dir, 'my-voice');
    mkdirSync(custom);
    copyFileSync(path.join(piperDir, 'model.onnx'), path.join(custom, 'weights.onnx'));
    copyFileSync(path.join(piperDir, 'tokens.txt'), path.join(custom, 'symbols.txt'));
    writeFileSync(
      path.join(custom, 'pack.json'),
      JSON.stringify({
        kind: 'tts-vits',
        files: { model: 'weights.onnx', tokens: 'symbols.txt' },
        languages: ['de'],
        voices: [{ speakerId: 0, displayName: 'Custom', gender: 'female' }],
        sha256: { 'weights.onnx': 'ae9999f7e3e7b190cb33715d64640a63e03c0f96c36bd78f52128b12366a0da9' },
      }),
    );
    mkdirSync(path.join(dir, 'junk'));
    writeFileSync(path.join(dir, 'junk', 'notes.txt'), 'hello');
    mkdirSync(path.join(dir, 'broken-json'));
    writeFileSync(path.join(dir, 'broken-json', 'pack.json'), '{ kind: nope');
    mkdirSync(path.join(dir, '.partial'));
    writeFileSync(path.join(dir, '.partial', 'x.download'), 'abc');
    mkdirSync(path.join(dir, '.unpack-x-123'));

    const { packs, problems } = await scanModelPacks(dir);
    const mine = packs.find((p) => p.id === 'my-voice')!;
    assert.equal(mine.kind, 'tts-vits');
    assert.equal(mine.files.model, path.join(custom, 'weights.onnx'));
    assert.equal(mine.files.tokens, path.join(custom, 'symbols.txt'));
    assert.deepEqual(mine.languages, ['de']);
    assert.equal(mine.voices[0]?.displayName, 'Custom');
    assert.equal(mine.sha256?.['weights.onnx'], 'ae9999f7e3e7b190cb33715d64640a63e03c0f96c36bd78f52128b12366a0da9');
    assert.equal(mine.metadata.sample_rate, '16000');
    assert.deepEqual(packs.map((p) => p.id).sort(), ['fake-piper-tones-en_US-16k', 'my-voice']);
    assert.deepEqual(problems.map((p) => p.id).sort(), ['broken-json', 'junk']);
    assert.match(problems.find((p) => p.id === 'junk')!.reason, /no \.onnx/);
    assert.match(problems.find((p) => p.id === 'broken-json')!.reason, /pack\.json/);
  });

  it('recognises the upstream archive layouts by their files', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'parley-layouts-'));
    const piper = path.join(sharedModel('fake-piper-tones-en_US-16k'), 'model.onnx');
    const make = (name: string, files: string[], dirs: string[] = []) => {
      const d = path.join(dir, name);
      mkdirSync(d);
      for (const f of files) copyFileSync(f.endsWith('.onnx') ? piper : path.join(sharedModel('fake-piper-tones-en_US-16k'), 'tokens.txt'), path.join(d, f));
      for (const sub of dirs) mkdirSync(path.join(d, sub));
    };
    make('sherpa-onnx-whisper-tiny', ['tiny-encoder.onnx', 'tiny-encoder.int8.onnx', 'tiny-decoder.onnx', 'tiny-decoder.int8.onnx', 'tiny-tokens.txt']);
    make('sherpa-onnx-whisper-tiny.en', ['tiny.en-encoder.int8.onnx', 'tiny.en-decoder.int8.onnx', 'tiny.en-tokens.txt']);
    make('sherpa-onnx-moonshine-tiny-en-int8', ['preprocess.onnx', 'encode.int8.onnx', 'uncached_decode.int8.onnx', 'cached_decode.int8.onnx', 'tokens.txt']);
    make('sherpa-onnx-nemo-parakeet-tdt-0.6b-v2-int8', ['encoder.int8.onnx', 'decoder.int8.onnx', 'joiner.int8.onnx', 'tokens.txt']);
    make('sherpa-onnx-zipformer-en-2023-06-26', ['encoder-epoch-99-avg-1.onnx', 'encoder-epoch-99-avg-1.int8.onnx', 'decoder-epoch-99-avg-1.onnx', 'joiner-epoch-99-avg-1.onnx', 'joiner-epoch-99-avg-1.int8.onnx', 'tokens.txt']);
    make('sherpa-onnx-sense-voice-zh-en-ja-ko-yue-2024-07-17', ['model.onnx', 'model.int8.onnx', 'tokens.txt']);
    // Upstream's archive: the gb lexicon sorts first, yet American voices need the us one first.
    make(
      'kokoro-multi-lang-v1_0',
      ['model.onnx', 'voices.bin', 'tokens.txt', 'lexicon-gb-en.txt', 'lexicon-us-en.txt', 'lexicon-zh.txt', 'date-zh.fst', 'number-zh.fst', 'phone-zh.fst'],
      ['espeak-ng-data', 'dict'],
    );
    make('kitten-nano-en-v0_1-fp16', ['model.fp16.onnx', 'voices.bin', 'tokens.txt'], ['espeak-ng-data']);
    make('matcha-icefall-en_US-ljspeech', ['model-steps-3.onnx', 'vocos-22khz-univ.onnx', 'tokens.txt'], ['espeak-ng-data']);
    make('vits-piper-de_DE-thorsten-medium', ['de_DE-thorsten-medium.onnx', 'tokens.txt'], ['espeak-ng-data']);
    make('sherpa-onnx-ced-mini-audio-tagging-2024-04-19', ['model.onnx', 'model.int8.onnx', 'class_labels_indices.csv']);
    // ZipVoice as upstream's archive unpacks, with the separately released vocoder beside it (the pull puts it there).
    make('sherpa-onnx-zipvoice-distill-int8-zh-en-emilia', ['encoder.int8.onnx', 'decoder.int8.onnx', 'tokens.txt', 'lexicon.txt', 'vocos_24khz.onnx'], ['espeak-ng-data', 'test_wavs']);
    make(
      'sherpa-onnx-pocket-tts-int8-2026-01-26',
      ['lm_flow.int8.onnx', 'lm_main.int8.onnx', 'encoder.onnx', 'decoder.int8.onnx', 'text_conditioner.onnx', 'vocab.json', 'token_scores.json'],
      ['test_wavs'],
    );

    // Punctuation packs as upstream's archives unpack (no weights here: the layout is what is tested).
    make('sherpa-onnx-punct-ct-transformer-zh-en-vocab272727-2024-04-12', ['model.onnx', 'tokens.json']);
    make('sherpa-onnx-online-punct-en-2024-08-06', ['model.onnx', 'bpe.vocab']);
    // An offline zipformer as upstream ships it: bpe.model and no bpe.vocab (derived when loaded).
    make('sherpa-onnx-zipformer-small-en-2023-06-26', ['encoder-epoch-99-avg-1.onnx', 'decoder-epoch-99-avg-1.onnx', 'joiner-epoch-99-avg-1.onnx', 'tokens.txt', 'bpe.model']);

    const { packs, problems } = await scanModelPacks(dir);
    assert.deepEqual(problems, []);
    const byId = new Map(packs.map((p) => [p.id, p]));
    const ct = byId.get('sherpa-onnx-punct-ct-transformer-zh-en-vocab272727-2024-04-12')!;
    assert.equal(ct.kind, 'punctuation-ct-transformer');
    assert.deepEqual(Object.keys(ct.files), ['model']);
    assert.deepEqual(buildPunctuationConfig(ct), { model: { ctTransformer: ct.files.model, numThreads: 1, provider: 'cpu', debug: 0 } });
    const online = byId.get('sherpa-onnx-online-punct-en-2024-08-06')!;
    assert.equal(online.kind, 'punctuation-cnn-bilstm');
    assert.deepEqual(online.languages, ['en']);
    assert.deepEqual(buildPunctuationConfig(online), { model: { cnnBilstm: online.files.model, bpeVocab: online.files.bpeVocab, numThreads: 1, provider: 'cpu', debug: 0 } });
    assert.throws(() => buildPunctuationConfig({ ...online, files: { model: online.files.model! } }), /bpeVocab/);
    const small = byId.get('sherpa-onnx-zipformer-small-en-2023-06-26')!;
    assert.equal(small.kind, 'asr-offline-transducer');
    assert.equal(small.hotwords, true, 'bpe.model alone lets a transducer boost keywords');
    assert.equal(byId.get('sherpa-onnx-zipformer-en-2023-06-26')!.hotwords, false, 'without BPE files it cannot');
    assert.equal(byId.get('sherpa-onnx-nemo-parakeet-tdt-0.6b-v2-int8')!.hotwords, false, 'NeMo packs do not use icefall BPE hotwords');
    const whisper = byId.get('sherpa-onnx-whisper-tiny')!;
    assert.equal(whisper.kind, 'asr-whisper');
    assert.equal(base(whisper.files.encoder), 'tiny-encoder.int8.onnx');
    assert.equal(base(whisper.files.decoder), 'tiny-decoder.int8.onnx');
    assert.equal(base(whisper.files.tokens), 'tiny-tokens.txt');
    assert.equal(whisper.languages[0], 'multi');
    assert.ok(whisper.languages.includes('hi'));
    assert.deepEqual(byId.get('sherpa-onnx-whisper-tiny.en')!.languages, ['en']);

    // A pulled pack's record lists the catalogue's languages ("multi" for Whisper); detection's
    // full list stays, so language=de can still choose this Whisper.
    writeFileSync(
      path.join(dir, 'sherpa-onnx-whisper-tiny', '.parley-pack.json'),
      JSON.stringify({ catalogueId: 'sherpa-onnx-whisper-tiny', archiveSha256: 'x', languages: ['multi'] }),
    );
    const rescanned = (await scanModelPacks(dir)).packs.find((p) => p.id === 'sherpa-onnx-whisper-tiny')!;
    assert.equal(rescanned.catalogueId, 'sherpa-onnx-whisper-tiny');
    assert.ok(rescanned.languages.includes('de'), rescanned.languages.join(','));
    const moon = byId.get('sherpa-onnx-moonshine-tiny-en-int8')!;
    assert.equal(moon.kind, 'asr-moonshine');
    assert.deepEqual(Object.keys(moon.files).sort(), ['cachedDecoder', 'encoder', 'preprocessor', 'tokens', 'uncachedDecoder']);
    assert.equal(byId.get('sherpa-onnx-nemo-parakeet-tdt-0.6b-v2-int8')!.kind, 'asr-nemo-transducer');
    const zip = byId.get('sherpa-onnx-zipformer-en-2023-06-26')!;
    assert.equal(zip.kind, 'asr-offline-transducer');
    assert.equal(base(zip.files.encoder), 'encoder-epoch-99-avg-1.int8.onnx');
    assert.deepEqual(zip.languages, ['en']);
    const sv = byId.get('sherpa-onnx-sense-voice-zh-en-ja-ko-yue-2024-07-17')!;
    assert.equal(sv.kind, 'asr-sense-voice');
    assert.equal(base(sv.files.model), 'model.int8.onnx');
    const kokoro = byId.get('kokoro-multi-lang-v1_0')!;
    assert.equal(kokoro.kind, 'tts-kokoro');
    assert.equal(base(kokoro.files.dataDir), 'espeak-ng-data');
    assert.equal(base(kokoro.files.dictDir), 'dict');
    const names = (list: string | undefined) => list?.split(',').map((f) => path.basename(f)).join(',');
    assert.equal(names(kokoro.files.lexicon), 'lexicon-us-en.txt,lexicon-zh.txt');
    assert.equal(names(kokoro.files.lexiconGb), 'lexicon-gb-en.txt,lexicon-zh.txt');
    assert.equal(names(kokoro.files.ruleFsts), 'phone-zh.fst,date-zh.fst,number-zh.fst');
    assert.deepEqual(kokoro.languages, ['en', 'zh']);
    assert.equal(byId.get('kitten-nano-en-v0_1-fp16')!.kind, 'tts-kitten');
    const matcha = byId.get('matcha-icefall-en_US-ljspeech')!;
    assert.equal(matcha.kind, 'tts-matcha');
    assert.equal(base(matcha.files.vocoder), 'vocos-22khz-univ.onnx');
    const thorsten = byId.get('vits-piper-de_DE-thorsten-medium')!;
    assert.equal(thorsten.kind, 'tts-vits');
    assert.deepEqual(thorsten.languages, ['en'], 'language from the model metadata (the fixture says English)');
    assert.equal(base(thorsten.files.dataDir), 'espeak-ng-data');
    const ced = byId.get('sherpa-onnx-ced-mini-audio-tagging-2024-04-19')!;
    assert.equal(ced.kind, 'audio-tagging');
    assert.equal(base(ced.files.model), 'model.int8.onnx');
    assert.equal(base(ced.files.labels), 'class_labels_indices.csv');
    const zipvoice = byId.get('sherpa-onnx-zipvoice-distill-int8-zh-en-emilia')!;
    assert.equal(zipvoice.kind, 'tts-zipvoice');
    assert.deepEqual(
      Object.fromEntries(Object.entries(zipvoice.files).map(([role, file]) => [role, base(file)])),
      { encoder: 'encoder.int8.onnx', decoder: 'decoder.int8.onnx', vocoder: 'vocos_24khz.onnx', tokens: 'tokens.txt', lexicon: 'lexicon.txt', dataDir: 'espeak-ng-data' },
    );
    assert.deepEqual(zipvoice.languages, ['zh', 'en']);
    const pocket = byId.get('sherpa-onnx-pocket-tts-int8-2026-01-26')!;
    assert.equal(pocket.kind, 'tts-pocket');
    assert.deepEqual(
      Object.fromEntries(Object.entries(pocket.files).map(([role, file]) => [role, base(file)])),
      {
        vocabJson: 'vocab.json',
        tokenScoresJson: 'token_scores.json',
        lmFlow: 'lm_flow.int8.onnx',
        lmMain: 'lm_main.int8.onnx',
        encoder: 'encoder.onnx',
        decoder: 'decoder.int8.onnx',
        textConditioner: 'text_conditioner.onnx',
      },
    );

    // ZipVoice without its vocoder is a problem that says where the vocoder comes from.
    rmSync(path.join(dir, 'sherpa-onnx-zipvoice-distill-int8-zh-en-emilia', 'vocos_24khz.onnx'));
    const again = await scanModelPacks(dir);
    assert.match(again.problems.find((p) => p.id === 'sherpa-onnx-zipvoice-distill-int8-zh-en-emilia')?.reason ?? '', /without a vocoder: put vocos_24khz\.onnx/);
  });

  it('maps language names and codes', () => {
    assert.equal(languageCode('English'), 'en');
    assert.equal(languageCode('Malayalam'), 'ml');
    assert.equal(languageCode('en-us'), 'en');
    assert.equal(languageCode('de_DE'), 'de');
    assert.equal(languageCode(''), undefined);
  });

  it('a missing models dir is empty, not an error', async () => {
    assert.deepEqual(await scanModelPacks(path.join(tmpdir(), 'parley-does-not-exist-xyz')), { packs: [], problems: [] });
  });
});
