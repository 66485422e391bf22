/**
 * The synthesis use case: text → sentences → engine PCM → resampled → encoded bytes.
 * Engine-agnostic: it reaches engines only through the voice registry and `TtsEngine`.
 * Everything a client can get wrong is checked in `prepare()`, before any byte is sent.
 */
import type { OutputFormat } from '../audio/pcm.js';
import { createEncoder, encodeWholeFile } from '../audio/encode.js';
import { concatFloat32 } from '../audio/channel-mix.js';
import { yieldToEventLoop } from '../audio/event-loop.js';
import { createStreamingResampler } from '../audio/resample.js';
import type { ModelGeneration, TtsEngine, Voice } from '../engines/types.js';
import { AbortedError, EngineError, InvalidRequestError } from '../errors.js';
import type { PronunciationDictRepository } from '../store/pronunciation-dict-repository.js';
import { baseLanguage, modelLanguages } from './languages.js';
import { prepareText } from './text/prepare.js';
import type { VoiceRegistry } from './voice-registry.js';

/** Samples encoded between yields to the event loop: four mp3 frames. */
const ENCODE_SLICE = 4 * 1152;

export interface SynthesisRequest {
  accountId: string;
  model: ModelGeneration;
  text: string;
  voiceId: string;
  /** Output rate in Hz (already defaulted and range-checked by the schema). */
  sampleRate: number;
  speed: number;
  /** 'auto' or an ISO 639-1 code the model allows. */
  language: string;
  outputFormat: OutputFormat;
  consistency?: number;
  pronunciationDicts: string[];
}

export interface PreparedSynthesis {
  request: SynthesisRequest;
  voice: Voice;
  engine: TtsEngine;
  language: string;
  sentences: string[];
}

/** Counts filled in while a stream runs (for the SSE completion event). */
export interface SynthesisStats {
  /** Samples produced at the output rate. */
  samples: number;
}

export interface SpeechFile {
  bytes: Uint8Array;
  contentType: string;
  sampleRate: number;
  durationSeconds: number;
}

export class SynthesisService {
  constructor(private readonly deps: { voices: VoiceRegistry; dicts: PronunciationDictRepository }) {}

  async prepare(request: SynthesisRequest): Promise<PreparedSynthesis> {
    const resolved = this.deps.voices.find(request.model, request.voiceId);
    if (!resolved) throw new InvalidRequestError(`voice_id "${request.voiceId}" is not a voice of ${request.model} (see GET /api/v1/${request.model === 'tts-large' ? 'tts-v2' : request.model}/get_voices)`);
    const { voice, engine } = resolved;
    const voiceLanguages = [...new Set(voice.languages.map(baseLanguage))];

    if (request.language !== 'auto' && !voiceLanguages.includes(request.language)) {
      throw new InvalidRequestError(
        `language "${request.language}" cannot be spoken by voice "${voice.id}", which speaks ${voiceLanguages.join(', ')}`,
      );
    }

    const { found, missing } = await this.deps.dicts.findMany(request.accountId, request.pronunciationDicts);
    if (missing.length) throw new InvalidRequestError(`pronunciation_dicts has unknown id(s): ${missing.join(', ')}`);

    const allowed = modelLanguages[request.model].filter((l) => voiceLanguages.includes(l));
    const prepared = prepareText(request.text, {
      language: request.language,
      // Detection only chooses among what this voice can say; a voice speaks its own language otherwise.
      allowedLanguages: allowed.length ? allowed : voiceLanguages,
      dicts: found,
      normalize: !engine.normalizesText,
    });
    if (prepared.sentences.length === 0) throw new InvalidRequestError('text must contain something to say');
    return { request, voice, engine, language: prepared.language, sentences: prepared.sentences };
  }

  /** Mono PCM at the requested rate, sentence by sentence as the engine produces it. */
  async *pcm(prepared: PreparedSynthesis, signal: AbortSignal, stats?: SynthesisStats): AsyncGenerator<Float32Array> {
    const { voice, engine, request } = prepared;
    const resampler = await createStreamingResampler(voice.sampleRate, request.sampleRate);
    let flushed = false;
    try {
      for (const sentence of prepared.sentences) {
        if (signal.aborted) throw new AbortedError();
        try {
          for await (const piece of engine.synthesize(voice, sentence, {
            speed: request.speed,
            language: prepared.language,
            consistency: request.consistency,
            signal,
          })) {
            const out = resampler.process(piece);
            if (stats) stats.samples += out.length;
            if (out.length) yield out;
          }
        } catch (err) {
          if (err instanceof AbortedError || signal.aborted) throw new AbortedError();
          if (err instanceof EngineError) throw err;
          throw new EngineError(`Voice ${voice.id} failed: ${(err as Error).message}`);
        }
      }
      const tail = resampler.flush();
      flushed = true;
      if (stats) stats.samples += tail.length;
      if (tail.length) yield tail;
    } finally {
      // An abort or a consumer that stops early leaves the native filter state to free.
      if (!flushed) resampler.dispose();
    }
  }

  /** The requested output format as a byte stream (decisions.md point 10): header first for wav. */
  async *encodedStream(prepared: PreparedSynthesis, signal: AbortSignal, stats?: SynthesisStats): AsyncGenerator<Uint8Array> {
    const encoder = await createEncoder(prepared.request.outputFormat, prepared.request.sampleRate, 'stream');
    for await (const samples of this.pcm(prepared, signal, stats)) {
      // Encoding (mp3 above all) runs on the main thread: small slices with a yield between keep
      // other requests moving while a long sentence is encoded.
      for (let at = 0; at < samples.length; at += ENCODE_SLICE) {
        if (at > 0) await yieldToEventLoop();
        const bytes = encoder.push(samples.subarray(at, at + ENCODE_SLICE));
        if (bytes.length) yield bytes;
      }
    }
    const last = encoder.end();
    if (last.length) yield last;
  }

  /** The whole file of /get_speech (decisions.md point 11). */
  async wholeFile(prepared: PreparedSynthesis, options: { wavHeader: boolean }, signal: AbortSignal): Promise<SpeechFile> {
    const parts: Float32Array[] = [];
    for await (const samples of this.pcm(prepared, signal)) parts.push(samples);
    const all = concatFloat32(parts);
    const total = all.length;
    const rate = prepared.request.sampleRate;
    const file = await encodeWholeFile(prepared.request.outputFormat, all, rate, { wavHeader: options.wavHeader });
    // mp3 may be encoded at the nearest MPEG rate: report the rate the bytes really have.
    return { bytes: file.bytes, contentType: file.contentType, sampleRate: file.sampleRate, durationSeconds: total / rate };
  }
}
