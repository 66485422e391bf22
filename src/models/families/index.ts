/**
 * Every model family Parley knows, in the order their recognition is tried: the first family
 * whose detect() answers (a pack or a problem) owns the folder. A new family is one module
 * exporting a ModelFamily (defineFamily), added to this list; the kinds of pack Parley knows
 * (PackKind) are the kinds the listed families declare.
 */
import { debianEspeakDataDir, type AnyEnginePack, type Capability, type EngineBuildOptions, type EnginePack } from '../../engines/capabilities.js';
import type { ModelPack } from '../model-pack.js';
import { ModelPackError } from '../../errors.js';
import { audioTagging } from './audio-tagging.js';
import type { AnyKindDefinition, KindDefinition, ModelFamily } from './family.js';
import { kitten } from './kitten.js';
import { kokoro } from './kokoro.js';
import { matcha } from './matcha.js';
import { moonshine } from './moonshine.js';
import { nemo } from './nemo.js';
import { paraformer } from './paraformer.js';
import { piperVits } from './piper-vits.js';
import { punctuation } from './punctuation.js';
import { pocket } from './pocket.js';
import { segmentation } from './segmentation.js';
import { senseVoice } from './sense-voice.js';
import { sileroVad } from './silero-vad.js';
import { speakerEmbedding } from './speaker-embedding.js';
import { whisper } from './whisper.js';
import { zipformer } from './zipformer.js';
import { zipvoice } from './zipvoice.js';

export const MODEL_FAMILIES = [
  // Told apart by a file of their own, or (punctuation) by their release name.
  punctuation,
  audioTagging,
  sileroVad,
  whisper,
  moonshine,
  // Zero-shot TTS: by name, metadata or files of their own, before the encoder/decoder families.
  zipvoice,
  pocket,
  // Encoder/decoder/joiner: NeMo by name or metadata, the rest are icefall transducers.
  nemo,
  zipformer,
  kitten,
  kokoro,
  matcha,
  // One model with tokens.txt: by name or metadata, VITS last (an espeak-ng-data folder suffices).
  senseVoice,
  paraformer,
  piperVits,
  // One model without tokens.
  segmentation,
  speakerEmbedding,
] as const;

type KindsOf<F> = F extends { kinds: infer Kinds } ? keyof Kinds & string : never;

/** Every kind of pack the listed families declare. */
export type PackKind = KindsOf<(typeof MODEL_FAMILIES)[number]>;

/** Families registered while the server runs (tests, plug-ins): tried before the listed ones. */
const registered: ModelFamily[] = [];

/** The families recognition tries, in order. */
export function modelFamilies(): readonly ModelFamily[] {
  return [...registered, ...(MODEL_FAMILIES as readonly ModelFamily[])];
}

/**
 * Adds a family at run time, tried before the listed ones; what one line in MODEL_FAMILIES does
 * for a family built in. Returns the function that removes it again.
 */
export function registerModelFamily(family: ModelFamily): () => void {
  registered.unshift(family);
  return () => {
    const at = registered.indexOf(family);
    if (at >= 0) registered.splice(at, 1);
  };
}

/** Every kind the families know (registered ones included). */
export function packKinds(): string[] {
  return modelFamilies().flatMap((f) => Object.keys(f.kinds));
}

export function isPackKind(kind: unknown): kind is PackKind {
  return typeof kind === 'string' && modelFamilies().some((f) => Object.hasOwn(f.kinds, kind));
}

export function familyOf(kind: string): ModelFamily {
  const family = modelFamilies().find((f) => Object.hasOwn(f.kinds, kind));
  if (!family) throw new Error(`no model family handles packs of kind ${kind}`);
  return family;
}

/** What the family declares for packs of this kind. */
export function kindOf(kind: string): AnyKindDefinition {
  const family = familyOf(kind);
  return (family.kinds as Record<string, AnyKindDefinition>)[kind]!;
}

export function capabilityOf(kind: string): Capability {
  return kindOf(kind).capability;
}

const defaultBuildOptions = (): EngineBuildOptions => ({ espeakDataDir: debianEspeakDataDir, numThreads: 1 });

/**
 * A verified pack as the engines take it: its capability, the engine config its family builds
 * and the traits its engine needs. The server's engines and the verification's test load both
 * come through here, so they load the same config.
 */
export function enginePackOf(pack: ModelPack, options: Partial<EngineBuildOptions> = {}): AnyEnginePack {
  const built = { ...defaultBuildOptions(), ...options };
  return buildEnginePack(kindOf(pack.kind) as KindDefinition<Capability>, pack, built) as AnyEnginePack;
}

/** enginePackOf for a pack that must give `capability` (tests, benches): a ModelPackError when it gives another. */
export function enginePackAs<C extends Capability>(capability: C, pack: ModelPack, options: Partial<EngineBuildOptions> = {}): EnginePack<C> {
  const built = enginePackOf(pack, options);
  if (built.capability !== capability) throw new ModelPackError(`model pack ${pack.id} is a ${built.capability} pack, not a ${capability} pack`);
  return built as EnginePack<C>;
}

function buildEnginePack<C extends Capability>(definition: KindDefinition<C>, pack: ModelPack, options: EngineBuildOptions): EnginePack<C> {
  const config = definition.engineConfig(pack, options);
  return {
    id: pack.id,
    ...(pack.revision !== undefined ? { revision: pack.revision } : {}),
    languages: pack.languages,
    capability: definition.capability,
    config,
    traits: definition.traits(pack, config, options),
  };
}
