/**
 * A model pack: one folder under the models dir holding the files of one upstream sherpa-onnx
 * release archive (as it unpacks), or described by a small pack.json. Its family turns a verified
 * pack into what the engines take (an EnginePack); engines never look at packs or folders.
 */
import type { PackVoice } from '../engines/capabilities.js';

export type { PackVoice };

export interface ModelPack<K extends string = string> {
  /** The folder name: stable, what logs, /readyz and `parley models` call it. */
  id: string;
  /** Absolute path of the folder. */
  dir: string;
  /** One of the kinds its family declares (PackKind, src/models/families/index.ts). */
  kind: K;
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
