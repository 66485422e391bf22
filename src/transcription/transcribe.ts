/**
 * The transcription use case behind POST /stt/get_text and the job runner: decode the upload,
 * run the speech pipeline, analyse the speakers when asked, and return the result (request_id, transcription, language, words, utterances, duration, metadata). Engines come from a getter so a model reload swaps them between requests.
 */
import { decodeAudio, type DecodeHint, type DecodeOptions } from '../audio/decode.js';
import type { PcmAudio } from '../audio/pcm.js';
import type { DecodingSettings } from '../config.js';
import { UnsupportedAudioError } from '../errors.js';
import { requireTranscriptionPacks } from '../models/missing-packs.js';
import { analyzeSpeakers } from '../voice-analysis/speaker-analysis.js';
import type { SpeakerAnalyzer, SpeakerTraits, TraitRequest } from '../voice-analysis/types.js';
import { transcribeAudio, type Resample, type TranscriptionEngines } from './pipeline.js';
import { speakerIndex } from './speakers.js';
import type { ResultUtterance, ResultWord, SpeakerBreakdown, Transcribe, TranscriptionResult, Utterance, Word } from './types.js';

/** The engines one request uses, held until release() even if a model reload replaces them meanwhile. */
export type HeldEngines = Partial<TranscriptionEngines> & Pick<TranscriptionEngines, 'recognizers'> & { analyzer: SpeakerAnalyzer; release(): void };

/** What metrics learn from transcription; implemented outside the use case. */
export interface TranscriptionObserver {
  /** One upload transcribed: its audio's length and the time it took, by the recogniser that heard it. */
  transcribed(recognizer: string, audioSeconds: number, processingSeconds: number): void;
}

export interface TranscriberDeps {
  /** The engines of the moment; undefined `vad` means no VAD pack is installed. */
  engines(): HeldEngines;
  /** The duration cap, decode concurrency and ffmpeg runner (rate and signal are set per request). */
  decode?: Pick<DecodeOptions, 'maxSeconds' | 'ffmpeg' | 'concurrency'>;
  utterancePauseSeconds: number;
  /** config.transcription.decoding; unset = its defaults. */
  decoding?: DecodingSettings;
  observer?: TranscriptionObserver;
  /** Where uploads are decoded and resampled (decode-workers.ts); unset, on the event loop. */
  decoder?: UploadDecoder;
}

/** Decoding and resampling done elsewhere than on the event loop, with decodeAudio's checks, bound and errors. */
export interface UploadDecoder {
  decode(bytes: Uint8Array, hint: DecodeHint, options: DecodeOptions): Promise<PcmAudio>;
  resample: Resample;
}

export function createTranscriber(deps: TranscriberDeps): Transcribe {
  return async (input, options, context) => {
    const engines = deps.engines();
    const startedAt = performance.now();
    try {
      const result = await transcribeWith(engines, deps, input, options, context);
      if (deps.observer) {
        const recognizer = engines.recognizers.find((r) => r.languages.includes(result.language)) ?? engines.recognizers.find((r) => r.languages.includes('multi'));
        deps.observer.transcribed(recognizer?.id ?? 'none', result.duration, (performance.now() - startedAt) / 1000);
      }
      return result;
    } finally {
      engines.release();
    }
  };
}

/** The VAD every transcription needs; without one the request is refused at once, naming the pack to install. */
export function requireVad(engines: Pick<HeldEngines, 'vad'>): NonNullable<HeldEngines['vad']> {
  if (!engines.vad) requireTranscriptionPacks({ vad: false, recognizers: 1 }, 'en');
  return engines.vad!;
}

/** Throws PackNotInstalledError naming all that the held engines lack (the VAD, any recogniser). */
export function requireTranscriptionEngines(engines: Pick<HeldEngines, 'vad' | 'recognizers'>, language: string): void {
  requireTranscriptionPacks({ vad: Boolean(engines.vad), recognizers: engines.recognizers.length }, language);
}

async function transcribeWith(
  engines: HeldEngines,
  deps: TranscriberDeps,
  ...[input, options, context]: Parameters<Transcribe>
): Promise<TranscriptionResult> {
  const { signal } = context;
  requireTranscriptionEngines(engines, options.language);
  const vad = requireVad(engines);
  // Decoded straight to the VAD's rate (16 kHz mono, which every later stage takes), within the
  // duration cap. Bytes that do not decode get the one fixed sentence clients match on;
  // the decoder's own reason (often ffmpeg's stderr) stays on the error's cause for the logs.
  // The cap's error (AudioTooLongError) names the limit and goes out as it is.
  const decode = deps.decoder ? deps.decoder.decode.bind(deps.decoder) : decodeAudio;
  const audio = await decode(input.bytes, { contentType: input.contentType, filename: options.filename }, { ...deps.decode, sampleRate: vad.sampleRate, signal }).catch((err: unknown) => {
    throw err instanceof UnsupportedAudioError ? Object.assign(new UnsupportedAudioError(), { cause: err }) : err;
  });
  const transcript = await transcribeAudio(
    audio,
    {
      language: options.language,
      wordTimestamps: options.wordTimestamps,
      sentenceTimestamps: options.sentenceTimestamps,
      diarize: options.diarize,
      speakerConfidence: options.currentFields === true,
      signal,
      utterancePauseSeconds: deps.utterancePauseSeconds,
      decoding: deps.decoding,
      resample: deps.decoder?.resample,
      ...(options.keywords?.length ? { keywords: options.keywords } : {}),
      text: { numerals: options.numerals, format: options.format, redactPci: options.redactPci, redactPii: options.redactPii },
    },
    { vad, recognizers: engines.recognizers, diarizer: engines.diarizer, punctuator: engines.punctuator },
  );

  const duration = round3(transcript.duration);
  const result: TranscriptionResult = {
    request_id: context.requestId,
    transcription: transcript.transcription,
    language: transcript.language,
    words: options.currentFields ? transcript.words.map((w) => currentWord(w, options.diarize)) : transcript.words.map(seedWord),
    utterances: options.currentFields ? transcript.utterances.map((u) => currentUtterance(u, options.diarize)) : transcript.utterances,
    duration,
    metadata: { filename: options.filename, duration, fileSize: input.bytes.byteLength },
  };
  if (transcript.keywordsApplied !== undefined) result.keywords_applied = transcript.keywordsApplied;
  if (transcript.redactedEntities) result.redacted_entities = transcript.redactedEntities;
  if (transcript.namesRedacted === false) result.names_redacted = false;

  const want: TraitRequest = { age: options.ageDetection, gender: options.genderDetection, emotions: options.emotionDetection };
  if (want.age || want.gender || want.emotions) {
    const emotionTags = transcript.segments.flatMap((s) => (s.emotion ? [{ start: s.start, end: s.end, emotion: s.emotion }] : []));
    const analysis = await analyzeSpeakers(engines.analyzer, audio.samples, audio.sampleRate, transcript.speakerTurns, want, {
      speechSpans: transcript.segments,
      emotionTags,
      signal,
    });
    const dominant = analysis.speakers.find((s) => s.speaker === analysis.dominant)?.traits;
    const analyzers: Record<string, string> = {};
    if (dominant) {
      if (want.age && dominant.age) result.age = dominant.age;
      if (want.gender && dominant.gender) result.gender = dominant.gender;
      if (want.emotions && dominant.emotions) result.emotions = dominant.emotions;
      Object.assign(analyzers, dominant.analyzers);
    }
    if (options.diarize) result.speakers = analysis.speakers.map(({ speaker, traits }) => breakdown(speaker, traits));
    result.metadata.analyzers = analyzers;
  }
  return result;
}

/** The seed's word: its speaker label, no confidence. */
function seedWord(w: Word): ResultWord {
  return { word: w.word, start: w.start, end: w.end, speaker: w.speaker };
}

/** The current layout's word: its confidence, and with diarize its speaker's number and how sure that is. */
function currentWord(w: Word, diarize: boolean): ResultWord {
  const word: ResultWord = { word: w.word, start: w.start, end: w.end, confidence: w.confidence ?? null };
  if (diarize) {
    word.speaker = speakerIndex(w.speaker);
    // 0 where the diarizer could not measure it (no turn, or turns too short to embed): no evidence for the label.
    word.speaker_confidence = w.speakerConfidence ?? 0;
  }
  return word;
}

function currentUtterance(u: Utterance, diarize: boolean): ResultUtterance {
  return { text: u.text, start: u.start, end: u.end, ...(diarize && { speaker: speakerIndex(u.speaker) }) };
}

function breakdown(speaker: string, traits: SpeakerTraits): SpeakerBreakdown {
  const out: SpeakerBreakdown = { speaker };
  if (traits.age) out.age = traits.age;
  if (traits.gender) out.gender = traits.gender;
  if (traits.emotions) out.emotions = traits.emotions;
  return out;
}

function round3(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}
