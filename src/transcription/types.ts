/** Domain types of transcription, shared by the route, the service and jobs. */
import type { AgeGroup, Emotions } from '../voice-analysis/types.js';
import type { Keyword } from './options/keywords.js';

export type { AgeGroup, Emotions };

export interface TranscriptionOptions {
  /** ISO 639-1 code, "multi" (detect), or an aggregator that detects among its languages (languages.ts). */
  language: string;
  wordTimestamps: boolean;
  /**
   * The current layout's word and utterance fields: each word's `confidence`, and with diarize an
   * integer `speaker` with its `speaker_confidence` (utterances an integer `speaker`). Unset: the
   * seed's, every word and utterance with a `speaker_<n>` label and no confidence. Stored with a
   * job, so its delivery has the fields of the route it came in by.
   */
  currentFields?: boolean;
  /** Utterances with their times even without word timestamps (the current layout's sentence_timestamps). */
  sentenceTimestamps?: boolean;
  diarize: boolean;
  ageDetection: boolean;
  genderDetection: boolean;
  emotionDetection: boolean;
  /** metadata.filename: URL's last path segment, X-Filename / filename query, else "audio". */
  filename: string;
  /** Words to boost (`keywords`); unset or empty = none. Optional so job rows stored before these options still read. */
  keywords?: Keyword[];
  /** Spoken numbers as digits (`numerals`); 'auto' (the API's default): digits where the language has an inverse normaliser. */
  numerals?: boolean | 'auto';
  /** Sentence case and end punctuation (`format`). */
  format?: boolean;
  /** Card numbers, CVV, expiry, bank account and routing numbers become placeholders (`redact_pci`). */
  redactPci?: boolean;
  /** Emails, phone numbers, national ids, dates of birth, addresses become placeholders (`redact_pii`). */
  redactPii?: boolean;
}

export interface Word {
  word: string;
  start: number;
  end: number;
  speaker: string;
  /** From the recogniser's token probabilities (words.ts wordConfidences); unset or null when it gives none. */
  confidence?: number | null;
  /** With diarization: how surely the word is its speaker's (speakers.ts). */
  speakerConfidence?: number;
}

/**
 * A word as a result gives it: the seed's (`speaker` a `speaker_<n>` label), or the current
 * layout's (`confidence`, null when the recogniser gives no token probabilities; with diarize an
 * integer `speaker` and `speaker_confidence`).
 */
export interface ResultWord {
  word: string;
  start: number;
  end: number;
  speaker?: string | number;
  confidence?: number | null;
  speaker_confidence?: number;
}

/** An utterance as a result gives it: `speaker` a label (seed), an integer with diarize, or absent (current layout). */
export interface ResultUtterance {
  text: string;
  start: number;
  end: number;
  speaker?: string | number;
}

export interface Utterance {
  text: string;
  start: number;
  end: number;
  speaker: string;
}

export interface SpeakerBreakdown {
  speaker: string;
  age?: AgeGroup;
  gender?: 'male' | 'female';
  emotions?: Emotions;
}

export interface TranscriptionResult {
  request_id: string;
  transcription: string;
  language: string;
  words: ResultWord[];
  utterances: ResultUtterance[];
  duration: number;
  age?: AgeGroup;
  gender?: 'male' | 'female';
  emotions?: Emotions;
  /** Per-speaker analysis when diarize and an analysis flag are set (a field the original API lacks). */
  speakers?: SpeakerBreakdown[];
  /** With `keywords`: whether the recogniser boosted them (false: it cannot, and they were ignored). */
  keywords_applied?: boolean;
  /** With `redact_pci`/`redact_pii`: the placeholders put in, e.g. "[CREDITCARDNUMBER_1]". */
  redacted_entities?: string[];
  /** With `redact_pii`: false, as names need a named-entity pack and none is installed. */
  names_redacted?: boolean;
  metadata: {
    filename: string;
    duration: number;
    fileSize: number;
    /** Which analyzer produced each analysis field, e.g. {gender: "acoustic-baseline"}. */
    analyzers?: Record<string, string>;
  };
}

/** Audio as it arrived: raw bytes and the Content-Type that named them. */
export interface AudioInput {
  bytes: Uint8Array;
  contentType: string;
}

/**
 * The transcription use case as the route and the job runner call it: decode, VAD, recognise,
 * diarize, analyse. Throws UnsupportedAudioError for bytes that do not decode, InvalidRequestError
 * for a language with no recogniser, OverloadedError when the workers are saturated.
 */
export type Transcribe = (
  input: AudioInput,
  options: TranscriptionOptions,
  context: { requestId: string; signal?: AbortSignal },
) => Promise<TranscriptionResult>;
