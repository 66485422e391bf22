/**
 * What one model family declares: how to recognise its folder (and which files it needs), the
 * ONNX metadata sherpa reads without a default, whether it needs the shared espeak-ng data, and
 * its test load (the engine config the server would build, plus a tiny inference). A new family
 * is one module implementing this, registered in ./index.ts.
 */
import path from 'node:path';
import type { ModelPack, PackKind } from '../../engines/model-pack.js';
import { readOnnxMetadataSync } from '../onnx-metadata.js';

export interface Detected {
  kind: PackKind;
  files: Record<string, string>;
  languages: string[];
  /** The main ONNX file, whose metadata is recorded. */
  main?: string;
  /** The pack can boost keywords (sherpa-onnx hotwords); see ModelPack.hotwords. */
  hotwords?: boolean;
}

/** A recognised pack, or the reason a folder that looks like this family is not usable. */
export type Detection = Detected | { problem: string };

export interface TestLoadContext {
  espeakDataDir: string;
  /** For a diarization-segmentation pack: the speaker-embedding pack it is loaded with. */
  partner?: ModelPack;
}

export interface ModelFamily {
  name: string;
  kinds: readonly PackKind[];
  /** The folder as this family, or undefined when it is not this family's. */
  detect(folder: PackFolder): Detection | undefined;
  /** Metadata keys sherpa-onnx reads without a default from the main model, by kind. */
  requiredMetadata?: Partial<Record<PackKind, readonly string[]>>;
  /** The pack relies on the shared espeak-ng data (no own data dir or lexicon). */
  usesSharedEspeak?(pack: ModelPack): boolean;
  /** Load the pack as the server would and run a tiny inference (in a child process); what it learnt. */
  testLoad(pack: ModelPack, context: TestLoadContext): Promise<Record<string, unknown>>;
}

const isInt8 = (name: string) => /[._-]int8[._-]/i.test(name) || /int8\.onnx$/i.test(name);

/** One folder's listing, with the helpers every family's recognition uses. */
export class PackFolder {
  readonly lower: string;
  readonly onnx: string[];
  readonly tokens: string | undefined;

  constructor(
    readonly id: string,
    readonly dir: string,
    /** Top-level file names. */
    readonly names: string[],
    /** Top-level folder names. */
    readonly dirs: string[],
  ) {
    this.lower = id.toLowerCase();
    this.onnx = names.filter((n) => n.toLowerCase().endsWith('.onnx'));
    this.tokens = names.includes('tokens.txt') ? 'tokens.txt' : undefined;
  }

  abs(name: string): string {
    return path.join(this.dir, name);
  }

  /** The pack's own espeak-ng-data, as a files entry. */
  get dataDir(): Record<string, string> {
    return this.dirs.includes('espeak-ng-data') ? { dataDir: this.abs('espeak-ng-data') } : {};
  }

  get bpeVocab(): Record<string, string> {
    return this.names.includes('bpe.vocab') ? { bpeVocab: this.abs('bpe.vocab') } : {};
  }

  /** The SentencePiece model upstream packs ship (the vocabulary is derived from it when bpe.vocab is missing). */
  get bpeModel(): Record<string, string> {
    return this.names.includes('bpe.model') ? { bpeModel: this.abs('bpe.model') } : {};
  }

  /**
   * The preferred file among candidates: int8 when both exist, then the plainest name (fewest
   * extra words), then alphabetical.
   */
  pickPreferred(candidates: string[], preferInt8 = true): string | undefined {
    if (candidates.length === 0) return undefined;
    const score = (name: string) => {
      let s = 0;
      if (preferInt8 && isInt8(name)) s -= 1000;
      if (/no-metadata|fp16|\.bak|test/i.test(name)) s += 500;
      return s + name.length;
    };
    return [...candidates].sort((a, b) => score(a) - score(b) || a.localeCompare(b))[0];
  }

  metadataOf(name: string | undefined): { metadata: Record<string, string>; error?: string } {
    return readMetadata(name ? this.abs(name) : undefined);
  }

  /** The single model of a one-file pack (Piper, SenseVoice, CTC, segmentation...) and its metadata. */
  get single(): { model?: string; metadata: Record<string, string>; error?: string; modelType: string } {
    const model = this.pickPreferred(this.onnx);
    const { metadata, error } = this.metadataOf(model);
    return { model, metadata, ...(error ? { error } : {}), modelType: (metadata.model_type ?? '').toLowerCase() };
  }
}

export function readMetadata(file: string | undefined): { metadata: Record<string, string>; error?: string } {
  if (!file) return { metadata: {} };
  try {
    return { metadata: readOnnxMetadataSync(file) };
  } catch (error) {
    return { metadata: {}, error: error instanceof Error ? error.message : String(error) };
  }
}

const SAMPLE_RATE = 16_000;
export const TEST_SAMPLE_RATE = SAMPLE_RATE;

/** `seconds` of quiet noise at 16 kHz: real-looking input that exercises the whole graph. */
export function testAudio(seconds = 1): Float32Array {
  const samples = new Float32Array(Math.round(SAMPLE_RATE * seconds));
  let seed = 12345;
  for (let i = 0; i < samples.length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    samples[i] = ((seed / 0x7fffffff) * 2 - 1) * 0.01;
  }
  return samples;
}
