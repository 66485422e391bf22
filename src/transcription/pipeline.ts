/**
 * Decoded audio → transcript: resample to the VAD's rate, find speech, recognise it, turn tokens
 * into timed words, label speakers, group utterances. Engine-agnostic: it sees only the capability
 * interfaces of src/engines/types.ts.
 *
 * Each model family is fed the way it was trained and published, so that a model is as accurate
 * here as on its own:
 * - a streaming recogniser decodes the whole recording as one stream, as it would live, so it
 *   keeps its context across pauses and no word is clipped by a VAD edge. The VAD runs beside it
 *   and only groups the words into segments. A recording longer than streamWindowSeconds is
 *   decoded in overlapping windows.
 * - an offline recogniser decodes VAD segments, padded on both sides, merged across short
 *   pauses up to its window (Whisper: 30 s), and speech longer than that window is cut at a quiet
 *   point into overlapping pieces. Segments are recognised while the VAD is still scanning.
 * Where two windows overlap, their words are stitched at a word both heard (stitch.ts). Word and
 * segment times are always in the original audio's seconds, inside it, ordered and
 * non-overlapping. Windows are recognised one at a time (memory stays at one window's worth of
 * model state) and the AbortSignal is checked between them.
 */
import type { PcmAudio } from '../audio/pcm.js';
import { resampleYielding } from '../audio/resample-yielding.js';
import { defaultConfig, type DecodingSettings } from '../config.js';
import type { Diarizer, Punctuator, Recognizer, SpeakerTurn, StreamingVoiceActivityDetector, TimeSpan, VoiceActivityDetector } from '../engines/types.js';
import { AbortedError, InvalidRequestError } from '../errors.js';
import { requireTranscriptionPacks } from '../models/missing-packs.js';
import { DETECT, detectsLanguage, planTranscriptionLanguage, type TranscriptionLanguagePlan } from './languages.js';
import { assignSpeakers, buildUtterances, labelSingleSpeaker, speakerLabel } from './speakers.js';
import { SpeechSegmenter, splitWithOverlap } from './speech-segments.js';
import { stitchWords } from './stitch.js';
import { applyTextOptionsWithModels, textOptionsFor, type RequestedTextOptions } from './options/apply.js';
import { applyKeywordCasing, hotwordsOf, type Keyword } from './options/keywords.js';
import type { Utterance, Word } from './types.js';
import { assembleWords, joinWords, type TimedWord, type WordAssemblyOptions } from './words.js';

export interface TranscribeAudioOptions {
  /** ISO 639-1 code, "multi" to have a language-detecting recogniser pick it, or an aggregator (languages.ts). */
  language: string;
  wordTimestamps: boolean;
  /** Utterances (sentence times) without the words (sentence_timestamps=true). */
  sentenceTimestamps?: boolean;
  diarize: boolean;
  /** With diarize: how surely each word is its speaker's (the current layout's speaker_confidence). */
  speakerConfidence?: boolean;
  signal?: AbortSignal;
  /** A pause longer than this ends an utterance; default 0.8 s (config transcription.utterancePauseSeconds). */
  utterancePauseSeconds?: number;
  /** Windows, padding, merging and overlap; each unset field takes config.ts's default. */
  decoding?: Partial<DecodingSettings>;
  words?: WordAssemblyOptions;
  /** Words to boost where the recogniser can (sherpa hotwords). */
  keywords?: Keyword[];
  /** numerals, format, redaction: applied to the words before segments and utterances are made of them. */
  text?: RequestedTextOptions;
  /** Where the audio is brought to each engine's rate: a decode worker thread, or by default this thread between turns of its event loop. */
  resample?: Resample;
}

/** Samples at `fromRate` → the same audio at `toRate`; stops with AbortedError once `signal` fires. */
export type Resample = (samples: Float32Array, fromRate: number, toRate: number, signal?: AbortSignal) => Promise<Float32Array>;

export interface TranscriptionEngines {
  vad: VoiceActivityDetector | StreamingVoiceActivityDetector;
  recognizers: Recognizer[];
  diarizer?: Diarizer;
  /** A punctuation model for `format`; without one the rules format. */
  punctuator?: Punctuator;
}

/** One recognised segment: where it is, and what the recogniser said about it beyond the words. */
export interface TranscribedSegment extends TimeSpan {
  text: string;
  language?: string;
  emotion?: string;
}

export interface AudioTranscript {
  transcription: string;
  /** The requested language, or for "multi" and aggregators the one detected over most of the speech. */
  language: string;
  /** Always present, empty unless wordTimestamps (word_timestamps=true). */
  words: Word[];
  /** Always present, empty unless wordTimestamps or sentenceTimestamps. */
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
  /** Set when keywords were given: whether the recogniser boosted them. */
  keywordsApplied?: boolean;
  /** Set when redacting: the placeholders put in. */
  redactedEntities?: string[];
  /** Set (false) when PII redaction was asked for: names are not redacted without a named-entity pack. */
  namesRedacted?: false;
}

/**
 * The recogniser for `language` (see planTranscriptionLanguage): PackNotInstalledError when no
 * recogniser is installed at all, LanguageNotInstalledError, naming the pack to pull, when none
 * installed serves the language.
 */
export function chooseRecognizer(recognizers: Recognizer[], language: string): Recognizer {
  if (recognizers.length === 0) requireTranscriptionPacks({ vad: true, recognizers: 0 }, language);
  return planTranscriptionLanguage(recognizers, language).recognizer;
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
  checkEngines(engines, options);
  const plan = planTranscriptionLanguage(engines.recognizers, options.language);
  const recognizer = plan.recognizer;
  const settings: DecodingSettings = { ...defaultConfig.transcription.decoding, ...options.decoding };
  const duration = audio.samples.length / audio.sampleRate;
  const resample = options.resample ?? resampleYielding;
  const samples = await resample(audio.samples, audio.sampleRate, engines.vad.sampleRate, signal);
  const rate = engines.vad.sampleRate;

  // Started first: it is the longest single task and runs on its own worker beside recognition.
  let diarization: Promise<SpeakerTurn[]> | undefined;
  if (options.diarize && engines.diarizer) {
    const diarizerSamples = await resample(audio.samples, audio.sampleRate, engines.diarizer.sampleRate, signal);
    diarization = engines.diarizer.diarize(diarizerSamples, { signal, confidence: options.speakerConfidence === true });
    diarization.catch(() => undefined); // observed below; this only keeps an early failure from being "unhandled"
  }

  const wantsKeywords = (options.keywords?.length ?? 0) > 0;
  const hotwords = wantsKeywords && recognizer.supportsHotwords ? hotwordsOf(options.keywords!) : undefined;
  const windows: RecognizedWindow[] = [];
  let words: TimedWord[] = [];
  /** Recognises one window and joins its words to those before it (stitched where the two overlap). */
  const recognize = async (window: TimeSpan) => {
    if (signal?.aborted) throw new AbortedError();
    let slice: Float32Array = samples.subarray(Math.round(window.start * rate), Math.round(window.end * rate));
    if (recognizer.sampleRate !== rate) slice = await resample(slice, rate, recognizer.sampleRate, signal);
    const decode = (language: string) =>
      recognizer.recognize(slice, { language, signal, tailPaddingSeconds: settings.streamTailPaddingSeconds, ...(hotwords ? { hotwords } : {}) });
    let result = await decode(plan.recognizerLanguage);
    // An aggregator restricts detection: speech detected outside its languages is decoded again
    // in the member heard most so far (else its main language), and is reported as that member.
    if (plan.allowed && result.language && !plan.allowed.includes(result.language)) {
      const member = mostHeard(windows, plan.allowed) ?? plan.allowed[0]!;
      result = { ...(await decode(member)), language: member };
    }
    const found = assembleWords(result, window, options.words);
    const previous = windows.at(-1);
    words = previous && window.start < previous.end ? stitchWords(words, found, { start: window.start, end: previous.end }) : words.concat(found);
    windows.push({ start: window.start, end: window.end, language: result.language, emotion: result.emotion });
  };

  const vad = engines.vad;
  const scan = (stop?: AbortSignal): AsyncIterable<TimeSpan> | Promise<TimeSpan[]> =>
    'detectStream' in vad ? vad.detectStream(samples, { signal: stop }) : vad.detect(samples, { signal: stop });
  let speech: TimeSpan[];
  const maxSegmentSeconds = recognizer.streaming ? Infinity : Math.min(recognizer.windowSeconds ?? Infinity, settings.segmentMaxSeconds);
  const segmenter = new SpeechSegmenter(samples, rate, {
    mergeGapSeconds: settings.segmentMergeGapSeconds,
    padSeconds: recognizer.streaming ? 0 : settings.segmentPadSeconds,
    maxSegmentSeconds,
    // A model's own window (Whisper's 30 s) may be shorter than the configured limit the overlap was checked against.
    overlapSeconds: Math.min(settings.windowOverlapSeconds, maxSegmentSeconds / 4),
  });
  if (recognizer.streaming) {
    // The VAD only groups words here, so it scans beside recognition on the other worker; it
    // stops with the request, or as soon as recognition fails.
    const scanning = new AbortController();
    const stopScan = () => scanning.abort();
    signal?.addEventListener('abort', stopScan, { once: true });
    let scanFailure: unknown;
    const spans = (async () => {
      const found: TimeSpan[] = [];
      for await (const span of await scan(scanning.signal)) found.push(...segmenter.push(span));
      return [...found, ...segmenter.finish()];
    })();
    spans.catch((error: unknown) => (scanFailure = error)); // thrown between windows or awaited below
    try {
      for (const window of splitWithOverlap({ start: 0, end: samples.length / rate }, samples, rate, settings.streamWindowSeconds, settings.windowOverlapSeconds)) {
        if (scanFailure) throw scanFailure;
        await recognize(window);
      }
      speech = await spans;
    } finally {
      stopScan();
      signal?.removeEventListener('abort', stopScan);
    }
  } else {
    for await (const span of await scan(signal)) {
      for (const segment of segmenter.push(span)) await recognize(segment);
    }
    for (const segment of segmenter.finish()) await recognize(segment);
    speech = windows;
  }
  if (signal?.aborted) throw new AbortedError();

  // Milliseconds are plenty for the wire; rounding keeps order, so words stay non-overlapping, and
  // the last millisecond boundary inside the audio bounds every time.
  const lastMs = Math.floor(duration * 1000) / 1000;
  const inFile = <T extends TimeSpan>(t: T): T => ({ ...t, start: Math.min(roundMs(t.start), lastMs), end: Math.min(roundMs(t.end), lastMs) });
  const pause = options.utterancePauseSeconds ?? 0.8;
  let inAudio = words.map(inFile);
  // Numbers, placeholders and formatting are in the words themselves, so segments, utterances and
  // the transcription made of them all carry them; a merged word keeps its first start and last end.
  const textOptions = textOptionsFor(options.text, textLanguage(plan), pause);
  const text = textOptions ? await applyTextOptionsWithModels(inAudio, textOptions, { punctuator: engines.punctuator, signal }) : undefined;
  if (text) inAudio = text.words;
  // Last, so that sentence case and the lowering of all-capitals output leave the keywords' casing be.
  if (wantsKeywords) inAudio = applyKeywordCasing(inAudio, options.keywords);
  const segments = segmentsOf(speech, inAudio, windows).map(inFile);
  const labelled = diarization ? assignSpeakers(inAudio, await diarization) : labelSingleSpeaker(inAudio);
  const utterances = buildUtterances(labelled, pause);
  return {
    ...(wantsKeywords ? { keywordsApplied: Boolean(hotwords) } : {}),
    ...(text?.redactedEntities ? { redactedEntities: text.redactedEntities } : {}),
    ...(text?.namesRedacted === false ? { namesRedacted: false as const } : {}),
    transcription: joinWords(segments.map((s) => s.text).filter(Boolean)),
    language: detectsLanguage(options.language) ? detectedLanguage(segments, plan) : options.language,
    words: options.wordTimestamps ? labelled : [],
    utterances: options.wordTimestamps || options.sentenceTimestamps ? utterances : [],
    duration,
    segments,
    speakerTurns: utterances.length ? utterances : segments.map((s) => ({ text: s.text, start: s.start, end: s.end, speaker: speakerLabel(0) })),
    recognizer: recognizer.id,
  };
}

/** A window of audio the recogniser decoded, and what it said about it beyond the words. */
interface RecognizedWindow extends TimeSpan {
  language?: string;
  emotion?: string;
}

/**
 * The segments of the transcript: the speech spans (ordered; they may overlap where a long one
 * was cut into overlapping windows, and are then made to meet halfway), each holding the words
 * nearest to it and stretched to cover them, with the language and emotion of the window it lies in.
 * Words with no span at all (a VAD that heard nothing a streaming model did) form one segment.
 */
function segmentsOf(speech: TimeSpan[], words: TimedWord[], windows: RecognizedWindow[]): TranscribedSegment[] {
  const spans = speech.length > 0 ? speech.map((s) => ({ ...s })) : words.length > 0 ? [{ start: words[0]!.start, end: words.at(-1)!.end }] : [];
  for (let i = 1; i < spans.length; i++) {
    if (spans[i]!.start < spans[i - 1]!.end) spans[i - 1]!.end = spans[i]!.start = (spans[i]!.start + spans[i - 1]!.end) / 2;
  }
  const held: TimedWord[][] = spans.map(() => []);
  let at = 0;
  for (const word of words) {
    const middle = (word.start + word.end) / 2;
    // Spans and words are both ordered: move on while the next span is at least as near.
    while (at + 1 < spans.length && distance(spans[at + 1]!, middle) <= distance(spans[at]!, middle)) at++;
    held[at]!.push(word);
  }
  const segments: TranscribedSegment[] = [];
  spans.forEach((span, i) => {
    const own = held[i]!;
    const previousEnd = segments.at(-1)?.end ?? 0;
    const start = Math.max(previousEnd, Math.min(span.start, own[0]?.start ?? Infinity));
    const end = Math.max(start, span.end, own.at(-1)?.end ?? -Infinity);
    const segment: TranscribedSegment = { start, end, text: joinWords(own.map((w) => w.word)) };
    const window = windows.find((w) => w.start <= (start + end) / 2 && (start + end) / 2 <= w.end);
    if (window?.language) segment.language = window.language;
    if (window?.emotion) segment.emotion = window.emotion;
    segments.push(segment);
  });
  return segments;
}

function distance(span: TimeSpan, time: number): number {
  return time < span.start ? span.start - time : time > span.end ? time - span.end : 0;
}

function roundMs(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}

/** The language detected over the most speech time; else the aggregator's main language, or the recogniser's first real one. */
function detectedLanguage(segments: TranscribedSegment[], plan: TranscriptionLanguagePlan): string {
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
  return best ?? fallbackLanguage(plan);
}

/** Of `members`, the one the windows decoded so far were detected in for longest; undefined when none was. */
function mostHeard(windows: RecognizedWindow[], members: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestSeconds = 0;
  for (const member of members) {
    const total = windows.reduce((sum, w) => sum + (w.language === member ? w.end - w.start : 0), 0);
    if (total > bestSeconds) {
      best = member;
      bestSeconds = total;
    }
  }
  return best;
}

/** A detecting request's language before anything is detected: the aggregator's main language, else the recogniser's first real one. */
function fallbackLanguage(plan: TranscriptionLanguagePlan): string {
  return plan.allowed?.[0] ?? plan.recognizer.languages.find((l) => l !== DETECT) ?? DETECT;
}

/** The language whose number rules apply to the words: the requested one, or when detecting, fallbackLanguage's. */
function textLanguage(plan: TranscriptionLanguagePlan): string {
  return plan.recognizerLanguage !== DETECT ? plan.recognizerLanguage : plan.allowed?.[0] ?? (plan.recognizer.languages.find((l) => l !== DETECT) ?? 'en');
}
