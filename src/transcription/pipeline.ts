/**
 * Decoded audio → transcript: resample to the VAD's rate, find speech, recognise it segment by
 * segment, turn tokens into timed words, label speakers, group utterances. Engine-agnostic: it
 * sees only the capability interfaces of src/engines/types.ts.
 *
 * Recognition overlaps the VAD scan when the VAD can stream its spans (the sherpa one can): the
 * first segment is recognised while the rest of the file is still being scanned, so the VAD adds
 * little to the wall time. Segments are recognised one at a time (memory stays at one segment's
 * worth of model state) and the AbortSignal is checked between them.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { concatFloat32 } from '../audio/channel-mix.js';
import type { PcmAudio } from '../audio/pcm.js';
import { createStreamingResampler } from '../audio/resample.js';
import type { Diarizer, Recognizer, SpeakerTurn, StreamingVoiceActivityDetector, TimeSpan, VoiceActivityDetector } from '../engines/types.js';
import { AbortedError, InvalidRequestError } from '../errors.js';
import { assignSpeakers, buildUtterances, labelSingleSpeaker, speakerLabel } from './speakers.js';
import { SpeechSegmenter, type SegmenterOptions } from './speech-segments.js';
import type { Utterance, Word } from './types.js';
import { assembleWords, type TimedWord, type WordAssemblyOptions } from './words.js';

export interface TranscribeAudioOptions {
  /** ISO 639-1 code, or "multi" to have a language-detecting recogniser pick it. */
  language: string;
  wordTimestamps: boolean;
  diarize: boolean;
  signal?: AbortSignal;
  /** A pause longer than this ends an utterance; default 0.8 s (config transcription.utterancePauseSeconds). */
  utterancePauseSeconds?: number;
  segmenter?: SegmenterOptions;
  words?: WordAssemblyOptions;
}

export interface TranscriptionEngines {
  vad: VoiceActivityDetector | StreamingVoiceActivityDetector;
  recognizers: Recognizer[];
  diarizer?: Diarizer;
}

/** One recognised segment: where it is, and what the recogniser said about it beyond the words. */
export interface TranscribedSegment extends TimeSpan {
  text: string;
  language?: string;
  emotion?: string;
}

export interface AudioTranscript {
  transcription: string;
  /** The requested language, or for "multi" the one detected over most of the speech. */
  language: string;
  /** Empty unless wordTimestamps (decisions.md 17). */
  words: Word[];
  /** Empty unless wordTimestamps (decisions.md 17). */
  utterances: Utterance[];
  /** Seconds of the input audio. */
  duration: number;
  segments: TranscribedSegment[];
  /**
   * Who spoke when, labelled like the words (speaker_0…), whatever wordTimestamps says: the
   * utterances, or the speech segments as speaker_0 when no word was recognised.
   */
  speakerTurns: Utterance[];
  /** Id of the recogniser that served the request. */
  recognizer: string;
}

/** Resampling runs on the main thread; this many input samples go between yields to the event loop. */
const RESAMPLE_BLOCK = 5 * 48_000;

/**
 * The recogniser for `language`: the first that lists it, and for "multi" the first that detects
 * languages. InvalidRequestError when none is installed.
 */
export function chooseRecognizer(recognizers: Recognizer[], language: string): Recognizer {
  const found = recognizers.find((r) => r.languages.includes(language));
  if (found) return found;
  if (language === 'multi') {
    throw new InvalidRequestError('language multi (automatic detection) needs a language-detecting recogniser, and none is installed');
  }
  throw new InvalidRequestError(`language ${language} has no installed speech recogniser`);
}

/** The recogniser for the request, once the request's options are checked against what is installed. */
export function checkEngines(engines: Pick<TranscriptionEngines, 'recognizers' | 'diarizer'>, options: { language: string; diarize: boolean }): Recognizer {
  const recognizer = chooseRecognizer(engines.recognizers, options.language);
  if (options.diarize && !engines.diarizer) {
    throw new InvalidRequestError('diarize is not available: no speaker diarization models are installed');
  }
  return recognizer;
}

export async function transcribeAudio(
  audio: PcmAudio,
  options: TranscribeAudioOptions,
  engines: TranscriptionEngines,
): Promise<AudioTranscript> {
  const { signal } = options;
  const recognizer = checkEngines(engines, options);
  const duration = audio.samples.length / audio.sampleRate;
  const samples = await resampleYielding(audio.samples, audio.sampleRate, engines.vad.sampleRate, signal);
  const rate = engines.vad.sampleRate;

  // Started first: it is the longest single task and runs on its own worker beside recognition.
  let diarization: Promise<SpeakerTurn[]> | undefined;
  if (options.diarize && engines.diarizer) {
    const diarizerSamples = await resampleYielding(audio.samples, audio.sampleRate, engines.diarizer.sampleRate, signal);
    diarization = engines.diarizer.diarize(diarizerSamples, { signal });
    diarization.catch(() => undefined); // observed below; this only keeps an early failure from being "unhandled"
  }

  const segmenter = new SpeechSegmenter(samples, rate, options.segmenter);
  const segments: TranscribedSegment[] = [];
  const timedWords: TimedWord[] = [];
  const recognize = async (span: TimeSpan) => {
    if (signal?.aborted) throw new AbortedError();
    let slice: Float32Array = samples.subarray(Math.round(span.start * rate), Math.round(span.end * rate));
    if (recognizer.sampleRate !== rate) slice = await resampleYielding(slice, rate, recognizer.sampleRate, signal);
    const result = await recognizer.recognize(slice, { language: options.language, signal });
    const words = assembleWords(result, span, options.words);
    for (const w of words) timedWords.push(w);
    const segment: TranscribedSegment = { start: span.start, end: span.end, text: result.text };
    if (result.language) segment.language = result.language;
    if (result.emotion) segment.emotion = result.emotion;
    segments.push(segment);
  };

  const vad = engines.vad;
  const spans: AsyncIterable<TimeSpan> | TimeSpan[] =
    'detectStream' in vad ? vad.detectStream(samples, { signal }) : await vad.detect(samples, { signal });
  for await (const span of spans) {
    for (const segment of segmenter.push(span)) await recognize(segment);
  }
  for (const segment of segmenter.finish()) await recognize(segment);
  if (signal?.aborted) throw new AbortedError();

  // Milliseconds are plenty for the wire; rounding keeps order, so words stay non-overlapping.
  const inAudio = timedWords.map((w) => ({ ...w, start: roundMs(Math.min(w.start, duration)), end: roundMs(Math.min(w.end, duration)) }));
  const words = diarization ? assignSpeakers(inAudio, await diarization) : labelSingleSpeaker(inAudio);
  const pause = options.utterancePauseSeconds ?? 0.8;
  const utterances = buildUtterances(words, pause);
  const roundedSegments = segments.map((s) => ({ ...s, start: roundMs(s.start), end: roundMs(s.end) }));
  return {
    transcription: segments
      .map((s) => s.text)
      .join(' ')
      .replace(/\s+/g, ' ')
      .trim(),
    language: options.language === 'multi' ? detectedLanguage(segments, recognizer) : options.language,
    words: options.wordTimestamps ? words : [],
    utterances: options.wordTimestamps ? utterances : [],
    duration,
    segments: roundedSegments,
    speakerTurns: utterances.length ? utterances : roundedSegments.map((s) => ({ text: s.text, start: s.start, end: s.end, speaker: speakerLabel(0) })),
    recognizer: recognizer.id,
  };
}

function roundMs(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}

/** The language detected over the most speech time; else the recogniser's first real language. */
function detectedLanguage(segments: TranscribedSegment[], recognizer: Recognizer): string {
  const seconds = new Map<string, number>();
  for (const s of segments) {
    if (s.language) seconds.set(s.language, (seconds.get(s.language) ?? 0) + (s.end - s.start));
  }
  let best: string | undefined;
  let bestSeconds = 0;
  for (const [language, total] of seconds) {
    if (total > bestSeconds) {
      best = language;
      bestSeconds = total;
    }
  }
  return best ?? recognizer.languages.find((l) => l !== 'multi') ?? 'multi';
}

/** Resamples in blocks with a yield between them, so a long upload never stalls the event loop. */
async function resampleYielding(samples: Float32Array, fromRate: number, toRate: number, signal?: AbortSignal): Promise<Float32Array> {
  if (fromRate === toRate) return samples;
  const resampler = await createStreamingResampler(fromRate, toRate);
  try {
    const parts: Float32Array[] = [];
    for (let at = 0; at < samples.length; at += RESAMPLE_BLOCK) {
      if (signal?.aborted) throw new AbortedError();
      const out = resampler.process(samples.subarray(at, at + RESAMPLE_BLOCK));
      parts.push(out);
      if (at + RESAMPLE_BLOCK < samples.length) await yieldToEventLoop();
    }
    parts.push(resampler.flush());
    return concatFloat32(parts);
  } finally {
    resampler.dispose();
  }
}
