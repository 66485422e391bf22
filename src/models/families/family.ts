/**
 * What one model family declares: how to recognise its folder (and which files it needs), and for
 * each kind of pack it recognises, the capability it gives, the ONNX metadata sherpa reads without
 * a default, whether it needs the shared espeak-ng data, the one function that turns a verified
 * pack into the engine config sherpa-onnx takes, and the traits its engine needs beside that
 * config. Serving and verification's test load both take the config from that function. A new
 * family is one module exporting a ModelFamily, registered in ./index.ts.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Capability, EngineBuildOptions, EngineConfigs, EngineTraits } from '../../engines/capabilities.js';
import type { ModelPack } from '../model-pack.js';
import { ModelPackError } from '../../errors.js';
import { readOnnxMetadataSync } from '../onnx-metadata.js';

export interface Detected<K extends string = string> {
  kind: K;
  files: Record<string, string>;
  languages: string[];
  /** The main ONNX file, whose metadata is recorded. */
  main?: string;
  /** The pack can boost keywords (sherpa-onnx hotwords); see ModelPack.hotwords. */
  hotwords?: boolean;
}

/** A recognised pack, or the reason a folder that looks like this family is not usable. */
export type Detection<K extends string = string> = Detected<K> | { problem: string };

/** One kind of pack: what it can do and how its engine loads it. */
export interface KindDefinition<C extends Capability> {
  capability: C;
  /** Metadata keys sherpa-onnx reads without a default from the main model. */
  requiredMetadata?: readonly string[];
  /** The pack relies on the shared espeak-ng data (no own data dir or lexicon). */
  usesSharedEspeak?(pack: ModelPack): boolean;
  /** The sherpa-onnx config of a verified pack: what serving loads and what the test load loads. */
  engineConfig(pack: ModelPack, options: EngineBuildOptions): EngineConfigs[C];
  /** What the capability's engine needs beside the config. */
  traits(pack: ModelPack, config: EngineConfigs[C], options: EngineBuildOptions): EngineTraits[C];
}

/** A kind definition of any capability. */
export type AnyKindDefinition = { [C in Capability]: KindDefinition<C> }[Capability];

export interface ModelFamily<K extends string = string> {
  /** Short stable name (logs, tests). */
  id: string;
  /** What people call it. */
  name: string;
  /** Every kind of pack the family recognises, with its definition. */
  kinds: { readonly [P in K]: AnyKindDefinition };
  /** The folder as this family, or undefined when it is not this family's. */
  detect(folder: PackFolder): Detection<NoInfer<K>> | undefined;
  /** Languages of a pack.json pack that names none, from its main model's metadata. */
  languagesFromMetadata?(metadata: Record<string, string>): string[];
  /** Every language a catalogue entry of this family decodes, where the catalogue lists them in short (Whisper's ["multi"]). */
  cataloguedLanguages?(languages: readonly string[]): string[];
}

/** Declares a family, keeping its kinds as literal types (PackKind is derived from them). */
export function defineFamily<const K extends string>(family: ModelFamily<K>): ModelFamily<K> {
  return family;
}

/**
 * Role → absolute path for each of `roles`; every one must be declared by the pack and exist on
 * disk (sherpa-onnx ends the whole process on a missing path instead of throwing).
 */
export function requirePackFiles<R extends string>(pack: ModelPack, roles: readonly R[]): Record<R, string> {
  const files = {} as Record<R, string>;
  const problems: string[] = [];
  for (const role of roles) {
    const file = pack.files[role];
    if (!file) problems.push(`no ${role} file`);
    else if (!existsSync(file)) problems.push(`${role} file ${file} does not exist`);
    else files[role] = file;
  }
  if (problems.length > 0) throw new ModelPackError(`model pack ${pack.id}: ${problems.join('; ')}`);
  return files;
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
