/**
 * A streaming recogniser that takes hotwords per stream, straight from sherpa-onnx's C library.
 *
 * sherpa-onnx-node's OnlineRecognizer reads hotwords only from a file named in its config (its
 * createStream() takes no argument), so each new keyword list would cost a model load. The C
 * library the package ships, and that its addon itself runs on, has
 * SherpaOnnxCreateOnlineStreamWithHotwords; this module calls it through koffi (an FFI with
 * prebuilt binaries): one recogniser per pack, decoded with modified beam search, and each
 * stream with its own list. The JS binding's handles are N-API externals koffi cannot read, so
 * the recogniser, its streams and their decoding all go through the C calls here.
 *
 * Struct layouts must match the installed library exactly, or the process crashes: they follow
 * sherpa-onnx/c-api/c-api.h of k2-fsa/sherpa-onnx at commit 634265c9b57642fdd158120148785c89aa281c4b
 * and were checked against sherpa-onnx-node 1.13.8's own addon, whose compiled
 * CreateOnlineRecognizerWrapper clears 272 bytes for the recogniser config (136 for the model
 * config) and writes each field at the offsets below. So this path is used with that version
 * only (VERIFIED_SHERPA_VERSION), and the layout is checked again when it loads; anything else
 * makes loadStreamHotwords() throw and the caller falls back to a hotwords file.
 *
 * Only inference processes and their worker threads load this (like sherpa-onnx-node itself).
 */
import { createRequire } from 'node:module';
import { sherpaOnnxCLibraryPath, sherpaOnnxVersion, type SherpaOnlineRecognizerConfig, type SherpaOnlineResult, type SherpaOnlineStream, type SherpaWave } from '../sherpa-onnx.js';

/** The sherpa-onnx-node version whose C structs the layouts below were checked against. */
export const VERIFIED_SHERPA_VERSION = '1.13.8';

/** Byte sizes and offsets the 1.13.8 addon compiles in (x86-64 and other LP64 targets). */
const EXPECTED_LAYOUT = {
  modelConfigSize: 136,
  recognizerConfigSize: 272,
  offsets: { model_config: 8, decoding_method: 144, hotwords_file: 176, hotwords_score: 184, blank_penalty: 224, hotwords_buf: 232, hr: 248 },
  modelOffsets: { tokens: 48, num_threads: 56, provider: 64, model_type: 80, modeling_unit: 88, bpe_vocab: 96, tokens_buf: 104, nemo_ctc: 120, t_one_ctc: 128 },
};

const require = createRequire(import.meta.url);

type Koffi = typeof import('koffi');
type Pointer = bigint;

interface Binding {
  createRecognizer(config: unknown): Pointer | null;
  destroyRecognizer(recognizer: Pointer): void;
  createStream(recognizer: Pointer, hotwords: string): Pointer | null;
  destroyStream(stream: Pointer): void;
  acceptWaveform(stream: Pointer, sampleRate: number, samples: Float32Array, n: number): void;
  inputFinished(stream: Pointer): void;
  isReady(recognizer: Pointer, stream: Pointer): number;
  decode(recognizer: Pointer, stream: Pointer): void;
  resultJson(recognizer: Pointer, stream: Pointer): string;
}

function bind(): Binding {
  const version = sherpaOnnxVersion();
  if (version !== VERIFIED_SHERPA_VERSION) {
    throw new Error(`sherpa-onnx-node ${version} is not the version (${VERIFIED_SHERPA_VERSION}) whose C structs this binding was checked against`);
  }
  const koffi = require('koffi') as Koffi;
  const str = 'const char *';
  const transducer = koffi.struct('SherpaOnnxOnlineTransducerModelConfig', { encoder: str, decoder: str, joiner: str });
  const paraformer = koffi.struct('SherpaOnnxOnlineParaformerModelConfig', { encoder: str, decoder: str });
  const oneModel = (name: string) => koffi.struct(name, { model: str });
  const modelConfig = koffi.struct('SherpaOnnxOnlineModelConfig', {
    transducer,
    paraformer,
    zipformer2_ctc: oneModel('SherpaOnnxOnlineZipformer2CtcModelConfig'),
    tokens: str,
    num_threads: 'int32_t',
    provider: str,
    debug: 'int32_t',
    model_type: str,
    modeling_unit: str,
    bpe_vocab: str,
    tokens_buf: str,
    tokens_buf_size: 'int32_t',
    nemo_ctc: oneModel('SherpaOnnxOnlineNemoCtcModelConfig'),
    t_one_ctc: oneModel('SherpaOnnxOnlineToneCtcModelConfig'),
  });
  const recognizerConfig = koffi.struct('SherpaOnnxOnlineRecognizerConfig', {
    feat_config: koffi.struct('SherpaOnnxFeatureConfig', { sample_rate: 'int32_t', feature_dim: 'int32_t' }),
    model_config: modelConfig,
    decoding_method: str,
    max_active_paths: 'int32_t',
    enable_endpoint: 'int32_t',
    rule1_min_trailing_silence: 'float',
    rule2_min_trailing_silence: 'float',
    rule3_min_utterance_length: 'float',
    hotwords_file: str,
    hotwords_score: 'float',
    ctc_fst_decoder_config: koffi.struct('SherpaOnnxOnlineCtcFstDecoderConfig', { graph: str, max_active: 'int32_t' }),
    rule_fsts: str,
    rule_fars: str,
    blank_penalty: 'float',
    hotwords_buf: str,
    hotwords_buf_size: 'int32_t',
    hr: koffi.struct('SherpaOnnxHomophoneReplacerConfig', { dict_dir: str, lexicon: str, rule_fsts: str }),
  });
  checkLayout(koffi, modelConfig, recognizerConfig);

  const lib = koffi.load(sherpaOnnxCLibraryPath());
  const destroyJson = lib.func('void SherpaOnnxDestroyOnlineStreamResultJson(const char *json)');
  koffi.disposable('SherpaOnnxResultJson', 'const char *', destroyJson);
  return {
    createRecognizer: lib.func('void *SherpaOnnxCreateOnlineRecognizer(const SherpaOnnxOnlineRecognizerConfig *config)'),
    destroyRecognizer: lib.func('void SherpaOnnxDestroyOnlineRecognizer(void *recognizer)'),
    createStream: lib.func('void *SherpaOnnxCreateOnlineStreamWithHotwords(void *recognizer, const char *hotwords)'),
    destroyStream: lib.func('void SherpaOnnxDestroyOnlineStream(void *stream)'),
    acceptWaveform: lib.func('void SherpaOnnxOnlineStreamAcceptWaveform(void *stream, int32_t sample_rate, const float *samples, int32_t n)'),
    inputFinished: lib.func('void SherpaOnnxOnlineStreamInputFinished(void *stream)'),
    isReady: lib.func('int32_t SherpaOnnxIsOnlineStreamReady(void *recognizer, void *stream)'),
    decode: lib.func('void SherpaOnnxDecodeOnlineStream(void *recognizer, void *stream)'),
    resultJson: lib.func('SherpaOnnxResultJson SherpaOnnxGetOnlineStreamResultAsJson(void *recognizer, void *stream)'),
  };
}

function checkLayout(koffi: Koffi, modelConfig: ReturnType<Koffi['struct']>, recognizerConfig: ReturnType<Koffi['struct']>): void {
  const wrong: string[] = [];
  if (koffi.sizeof(modelConfig) !== EXPECTED_LAYOUT.modelConfigSize) wrong.push(`model config size ${koffi.sizeof(modelConfig)}`);
  if (koffi.sizeof(recognizerConfig) !== EXPECTED_LAYOUT.recognizerConfigSize) wrong.push(`recogniser config size ${koffi.sizeof(recognizerConfig)}`);
  for (const [field, at] of Object.entries(EXPECTED_LAYOUT.offsets)) if (koffi.offsetof(recognizerConfig, field) !== at) wrong.push(field);
  for (const [field, at] of Object.entries(EXPECTED_LAYOUT.modelOffsets)) if (koffi.offsetof(modelConfig, field) !== at) wrong.push(`model_config.${field}`);
  if (wrong.length > 0) throw new Error(`the C struct layout differs from sherpa-onnx-node ${VERIFIED_SHERPA_VERSION}'s on this platform: ${wrong.join(', ')}`);
}

let binding: Binding | Error | undefined;

/** The C calls, bound on first use; throws (every time, with the first reason) when they cannot be. */
function loadBinding(): Binding {
  if (binding === undefined) {
    try {
      binding = bind();
    } catch (error) {
      binding = error instanceof Error ? error : new Error(String(error));
    }
  }
  if (binding instanceof Error) throw binding;
  return binding;
}

/** A stream of a StreamHotwordsRecognizer; free() releases it (streams are not left to the collector). */
export interface HotwordsStream extends SherpaOnlineStream {
  free(): void;
}

/** sherpa's OnlineRecognizer surface (isReady, decode, getResult) with createStream(hotwords). */
export interface StreamHotwordsRecognizer {
  /** `hotwords`: "PHRASE :score" entries joined by "/" (sherpa's per-stream form). */
  createStream(hotwords: string): HotwordsStream;
  isReady(stream: SherpaOnlineStream): boolean;
  decode(stream: SherpaOnlineStream): void;
  getResult(stream: SherpaOnlineStream): SherpaOnlineResult;
}

const pointers = new WeakMap<object, Pointer>();
/** Frees what a caller dropped without freeing (a thread torn down mid-stream): never twice. */
const collected = new FinalizationRegistry<() => void>((free) => free());

function pointerOf(stream: SherpaOnlineStream): Pointer {
  const pointer = pointers.get(stream);
  if (pointer === undefined) throw new Error('not a stream of this recogniser, or freed already');
  return pointer;
}

/**
 * Builds a recogniser from the same plain config sherpa-onnx-node takes (transducer fields only),
 * decoding with modified beam search so per-stream hotwords apply. Throws when the C library
 * cannot be bound or rejects the config.
 */
export function createStreamHotwordsRecognizer(config: SherpaOnlineRecognizerConfig): StreamHotwordsRecognizer {
  const c = loadBinding();
  const { modelConfig } = config;
  const recognizer = c.createRecognizer({
    feat_config: { sample_rate: config.featConfig.sampleRate, feature_dim: config.featConfig.featureDim },
    model_config: {
      transducer: modelConfig.transducer,
      paraformer: { encoder: null, decoder: null },
      zipformer2_ctc: { model: null },
      tokens: modelConfig.tokens,
      num_threads: modelConfig.numThreads,
      provider: modelConfig.provider,
      debug: modelConfig.debug,
      model_type: null,
      modeling_unit: modelConfig.modelingUnit ?? null,
      bpe_vocab: modelConfig.bpeVocab ?? null,
      tokens_buf: null,
      tokens_buf_size: 0,
      nemo_ctc: { model: null },
      t_one_ctc: { model: null },
    },
    decoding_method: 'modified_beam_search',
    max_active_paths: config.maxActivePaths ?? 4,
    enable_endpoint: config.enableEndpoint,
    rule1_min_trailing_silence: 0,
    rule2_min_trailing_silence: 0,
    rule3_min_utterance_length: 0,
    hotwords_file: null,
    hotwords_score: config.hotwordsScore ?? 0,
    ctc_fst_decoder_config: { graph: null, max_active: 0 },
    rule_fsts: null,
    rule_fars: null,
    blank_penalty: 0,
    hotwords_buf: null,
    hotwords_buf_size: 0,
    hr: { dict_dir: null, lexicon: null, rule_fsts: null },
  });
  if (!recognizer) throw new Error('sherpa-onnx rejected the recogniser config');
  const handle: StreamHotwordsRecognizer = {
    createStream(hotwords) {
      const pointer = c.createStream(recognizer, hotwords);
      if (!pointer) throw new Error('sherpa-onnx could not create a stream');
      let live = true;
      const free = () => {
        if (!live) return;
        live = false;
        c.destroyStream(pointer);
      };
      const stream: HotwordsStream = {
        acceptWaveform({ samples, sampleRate }: SherpaWave) {
          c.acceptWaveform(pointerOf(stream), sampleRate, samples, samples.length);
        },
        inputFinished() {
          c.inputFinished(pointerOf(stream));
        },
        free() {
          pointers.delete(stream);
          collected.unregister(stream);
          free();
        },
      };
      pointers.set(stream, pointer);
      collected.register(stream, free, stream);
      return stream;
    },
    isReady: (stream) => c.isReady(recognizer, pointerOf(stream)) === 1,
    decode: (stream) => c.decode(recognizer, pointerOf(stream)),
    getResult: (stream) => JSON.parse(c.resultJson(recognizer, pointerOf(stream))) as SherpaOnlineResult,
  };
  // Streams hold no pointer to their recogniser, and the worker keeps this object while any stream of it is open.
  collected.register(handle, () => c.destroyRecognizer(recognizer));
  return handle;
}

/** Why per-stream hotwords cannot be used here (koffi, the C library or its layout), or undefined when they can. */
export function streamHotwordsUnavailable(): string | undefined {
  try {
    loadBinding();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}
