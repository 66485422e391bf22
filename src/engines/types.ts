/**
 * Small capability interfaces between the use cases (src/synthesis, src/transcription) and the
 * engine adapters. Nothing here knows about HTTP; nothing above this knows about sherpa-onnx.
 */

export type Gender = 'male' | 'female' | 'neutral';
export type ModelGeneration = 'tts-large' | 'tts-v2' | 'tts-v3.1';

/** A voice in the catalogue. `id` is what clients send as voice_id. */
export interface Voice {
  id: string;
  displayName: string;
  /** BCP-47-ish language tags the voice speaks, primary first (e.g. ["en", "en-US"]). */
  languages: string[];
  accent: string;
  gender: Gender;
  /** Native output rate of the engine for this voice. */
  sampleRate: number;
  /** Engine name, e.g. "espeak-ng", "sherpa-vits". */
  engine: string;
  /** Model generations whose endpoints serve this voice. */
  models: ModelGeneration[];
  age?: string;
}

export interface SynthesisOptions {
  /** 0.5..2, 1 = natural rate. Engines apply it through their own rate/length control. */
  speed: number;
  /** ISO 639-1 code of the (already normalised) text. */
  language: string;
  /** 0..1 (tts-v2 `consistency`): engines with duration noise map it there; others ignore it. */
  consistency?: number;
  signal?: AbortSignal;
  /**
   * Called once the text is spoken, by engines that know where they spoke each word (eSpeak NG
   * reports it); others never call it, and their words are timed from the audio instead.
   */
  onWords?: (words: EngineWordMark[]) => void;
}

/** Where an engine started a word: `length` characters at `start` of the text it was given. */
export interface EngineWordMark {
  start: number;
  length: number;
  /** From the start of the audio this call produced. */
  seconds: number;
}

/** A text-to-speech engine: one adapter per engine family (espeak-ng, sherpa VITS/Kokoro/...). */
export interface TtsEngine {
  readonly name: string;
  /**
   * True when the engine spells out numbers, dates and abbreviations itself (eSpeak NG does, in
   * every language it speaks); the synthesis use case then skips its own normaliser.
   */
  readonly normalizesText?: boolean;
  /** Voices this engine serves now. */
  listVoices(): Voice[];
  /**
   * Synthesise `text` (one sentence or clause, already normalised) with `voice`, yielding mono PCM
   * at `voice.sampleRate` as soon as the engine produces it. Stops early when `signal` aborts
   * (throwing AbortedError). Never blocks the event loop.
   */
  synthesize(voice: Voice, text: string, options: SynthesisOptions): AsyncIterable<Float32Array>;
  /**
   * For engines a model reload can retire: keeps this one loaded until the returned function is
   * called, so a synthesis that began before the reload ends on the engine it began with.
   */
  hold?(): () => void;
  close(): Promise<void>;
}

/** A stretch of audio, in seconds from the start of the file. */
export interface TimeSpan {
  start: number;
  end: number;
}

/** What a recogniser returns for one segment; times are seconds relative to the segment start. */
export interface RecognizedSegment {
  text: string;
  /** Tokens as the model spells them (BPE pieces with ▁, Whisper/SenseVoice pieces...). */
  tokens: string[];
  /** Start time of each token; same length as tokens, or empty when the model gives none. */
  timestamps: number[];
  /** Duration of each token where the model gives it (NeMo TDT); else empty. */
  durations: number[];
  /** Language the model detected (Whisper lang id, SenseVoice tag), ISO 639-1. */
  language?: string;
  /** SenseVoice emotion tag (HAPPY, SAD, ANGRY, NEUTRAL, FEARFUL, DISGUSTED, SURPRISED). */
  emotion?: string;
  /** Natural-log probability of each token, same length as tokens, where the model gives it (streaming transducers). */
  tokenLogProbs?: number[];
}

/** A word or phrase to favour in decoding (sherpa-onnx hotwords), with its boost. */
export interface Hotword {
  phrase: string;
  /** Added to the log-probability of each of its tokens while it is being matched; sherpa's default is 1.5. */
  score: number;
}

export interface RecognizeOptions {
  language: string;
  signal?: AbortSignal;
  /** Words to favour; only recognisers with supportsHotwords use them. */
  hotwords?: Hotword[];
  /**
   * Streaming models: silence appended after the samples so the encoder's last chunk (and the
   * word in it) is decoded; unset = the recogniser's own default.
   */
  tailPaddingSeconds?: number;
}

export interface Recognizer {
  readonly id: string;
  /** ISO 639-1 codes it can transcribe; includes "multi" when it detects the language. */
  readonly languages: string[];
  /** Rate the samples passed to recognize() must have. */
  readonly sampleRate: number;
  /** True when tokens carry real timestamps. */
  readonly hasTokenTimestamps: boolean;
  /**
   * True for a streaming model: it carries its context across pauses, so it is given the whole
   * recording (in long windows), as it would be live. Otherwise it is given speech segments.
   */
  readonly streaming?: boolean;
  /** Longest audio the model takes in one call (Whisper: its 30 s window), seconds; unset = no limit of its own. */
  readonly windowSeconds?: number;
  /** True when recognize() and openStream() boost the hotwords they are given (transducers with a BPE vocabulary). */
  readonly supportsHotwords?: boolean;
  recognize(samples: Float32Array, options: RecognizeOptions): Promise<RecognizedSegment>;
  /**
   * Streaming models: a live recognition stream, fed as audio arrives (each sample decoded once).
   * Rejects with OverloadedError when no more streams may open now.
   */
  openStream?(options?: { signal?: AbortSignal; hotwords?: Hotword[] }): Promise<RecognizerStream>;
  close(): Promise<void>;
}

/**
 * One live recognition: audio in as it arrives, the hypothesis so far out. Token times are
 * seconds from the stream's first sample. Calls must not overlap (each waits for the previous).
 */
export interface RecognizerStream {
  /** Takes samples at the recogniser's rate, decodes what is ready, returns the hypothesis so far. */
  accept(samples: Float32Array, options?: { signal?: AbortSignal }): Promise<RecognizedSegment>;
  /** Ends the input (decoding its last words) and returns the final result; the stream is closed after it. */
  finish(options?: { signal?: AbortSignal }): Promise<RecognizedSegment>;
  /** Lets the stream go without a result (idempotent). */
  close(): void;
}

/** A punctuation model: puts marks (and, if it restores case, capitals) into plain words. */
export interface Punctuator {
  readonly id: string;
  /** ISO 639-1 codes of the texts it was trained on. */
  readonly languages: string[];
  /** True when it also restores case; otherwise the text's case comes back as it went in. */
  readonly restoresCase: boolean;
  /** The text with marks after its words (the CT-Transformer writes Chinese marks: ， 。 ？ 、). */
  punctuate(text: string, options?: { signal?: AbortSignal }): Promise<string>;
  close(): Promise<void>;
}

export interface VadOptions {
  signal?: AbortSignal;
  /** Speech probability (0–1) a window must pass to count as speech; the detector's own default without it. */
  threshold?: number;
}

export interface VoiceActivityDetector {
  readonly sampleRate: number;
  /** Speech spans in seconds, ordered, non-overlapping. */
  detect(samples: Float32Array, options?: VadOptions): Promise<TimeSpan[]>;
  close(): Promise<void>;
}

/** A VAD that also yields spans while it works, so recognition can start before the scan ends. */
export interface StreamingVoiceActivityDetector extends VoiceActivityDetector {
  detectStream(samples: Float32Array, options?: VadOptions): AsyncIterable<TimeSpan>;
}

/** One class of an AudioSet tagger's output. */
export interface AudioEvent {
  name: string;
  prob: number;
  index: number;
}

/** An audio-tagging model: every class's probability for a stretch of 16 kHz mono audio. */
export interface AudioTagger {
  run(samples: Float32Array, sampleRate: number): Promise<AudioEvent[]>;
  close(): Promise<void>;
}

export interface SpeakerTurn extends TimeSpan {
  /** 0-based cluster index as the diarizer numbers it (not yet in order of appearance). */
  speaker: number;
  /** How surely this turn is its speaker's, in [0, 1], where the diarizer can say. */
  confidence?: number;
}

export interface Diarizer {
  readonly sampleRate: number;
  /** `confidence`: score each turn (costs a second embedding of every segment). */
  diarize(samples: Float32Array, options?: { signal?: AbortSignal; confidence?: boolean }): Promise<SpeakerTurn[]>;
  close(): Promise<void>;
}
