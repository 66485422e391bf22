/**
 * A model pack: one folder under the models dir holding the files of one upstream sherpa-onnx
 * release archive (as it unpacks), or described by a small pack.json. Engines take packs; they
 * never look at folders themselves.
 */
import type { Gender } from '../engines/types.js';

export type PackKind =
  | 'tts-vits'
  | 'tts-kokoro'
  | 'tts-matcha'
  | 'tts-kitten'
  | 'tts-zipvoice'
  | 'tts-pocket'
  | 'asr-online-transducer'
  | 'asr-offline-transducer'
  | 'asr-nemo-transducer'
  | 'asr-nemo-ctc'
  | 'asr-zipformer-ctc'
  | 'asr-whisper'
  | 'asr-sense-voice'
  | 'asr-moonshine'
  | 'asr-paraformer'
  | 'vad-silero'
  | 'diarization-segmentation'
  | 'speaker-embedding'
  | 'audio-tagging'
  | 'punctuation-ct-transformer'
  | 'punctuation-cnn-bilstm';

export const packKinds: readonly PackKind[] = [
  'tts-vits',
  'tts-kokoro',
  'tts-matcha',
  'tts-kitten',
  'tts-zipvoice',
  'tts-pocket',
  'asr-online-transducer',
  'asr-offline-transducer',
  'asr-nemo-transducer',
  'asr-nemo-ctc',
  'asr-zipformer-ctc',
  'asr-whisper',
  'asr-sense-voice',
  'asr-moonshine',
  'asr-paraformer',
  'vad-silero',
  'diarization-segmentation',
  'speaker-embedding',
  'audio-tagging',
  'punctuation-ct-transformer',
  'punctuation-cnn-bilstm',
];

/** A voice a TTS pack declares for one speaker id; anything left out comes from the pack. */
export interface PackVoice {
  speakerId: number;
  id?: string;
  displayName?: string;
  gender?: Gender;
  accent?: string;
  languages?: string[];
  /**
   * Not offered: a speaker the pack has but cannot serve (Kokoro's Spanish, French, Hindi,
   * Italian, Japanese and Portuguese voices, whose languages its lexicons do not cover).
   */
  omit?: boolean;
}

export interface ModelPack {
  /** The folder name: stable, what logs, /readyz and `parley models` call it. */
  id: string;
  /** Absolute path of the folder. */
  dir: string;
  kind: PackKind;
  /**
   * Absolute paths by role: model, tokens, encoder, decoder, joiner, voices, lexicon, dataDir,
   * labels, bpeVocab, bpeModel, acousticModel, vocoder, preprocessor, uncachedDecoder, cachedDecoder;
   * Pocket TTS: lmFlow, lmMain, textConditioner, vocabJson, tokenScoresJson.
   */
  files: Record<string, string>;
  /** ISO 639-1 codes; "multi" for recognisers that detect the language. */
  languages: string[];
  voices: PackVoice[];
  /** ONNX metadata of the main model (Piper: voice, sample_rate, n_speakers...), when read. */
  metadata: Record<string, string>;
  /** Expected sha256 by file name relative to dir (from pack.json or the catalogue). */
  sha256?: Record<string, string>;
  /**
   * Whether the pack's model family can boost keywords (sherpa-onnx hotwords: a transducer with a
   * BPE vocabulary); unset (a pack.json pack) = decided by the files it has.
   */
  hotwords?: boolean;
  /** Catalogue id when the pack came from `parley models pull`. */
  catalogueId?: string;
  /**
   * What the pack's files are now (their sizes and modification times), set when the pack is
   * verified: a pack whose revision is unchanged is the same model and is not loaded again.
   */
  revision?: string;
}
