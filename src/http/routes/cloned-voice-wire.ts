/**
 * A cloned voice as every clone route answers it. Parley's neutral routes (`/api/v1/tts-large/…`)
 * name a clone's model as Parley does (`tts-v3.1`); the product-named routes (`lightning…`) and
 * every route under `/waves/v1` use the service's names (`lightning-v3.1`), as its clients expect.
 */
import { Type } from '@sinclair/typebox';
import type { ModelGeneration } from '../../engines/types.js';
import type { ClonedVoiceRow } from '../../store/cloned-voice-repository.js';
import type { CloningModel } from '../../synthesis/voice-cloning.js';
import { productNamesOf, type RouteLayout } from './product-names.js';

export type CloneNaming = 'neutral' | 'product';

/** The naming of a route: `path` is its path name (`tts-large`, `lightning-large`, …), if it has one. */
export function cloneNamingOf(layout: RouteLayout | undefined, path?: string): CloneNaming {
  return layout === 'current' || path?.startsWith('lightning') ? 'product' : 'neutral';
}

/** The service's name of each model a clone is made for. */
const PRODUCT_CLONING_MODELS: Readonly<Record<CloningModel, string>> = {
  'tts-large': 'lightning-large',
  'tts-v3.1': 'lightning-v3.1',
  'tts-v3.1-pro': 'lightning-v3.1-pro',
};

/** A clone's `model` as a route of `naming` names it. */
export function cloningModelName(model: string, naming: CloneNaming): string {
  if (naming === 'neutral' || !Object.hasOwn(PRODUCT_CLONING_MODELS, model)) return model;
  return PRODUCT_CLONING_MODELS[model as CloningModel];
}

/** Clones speak on every generation (the built-in match and zero-shot packs alike); Pro is tts-v3.1 here. */
const SPOKEN_ON: ModelGeneration[] = ['tts-v3.1', 'tts-v2', 'tts-large'];
const SPOKEN_ON_NAMES = [PRODUCT_CLONING_MODELS['tts-v3.1-pro'], ...SPOKEN_ON.flatMap(productNamesOf)];

/** The product names a clone speaks on, the model it was made for first; none while it cannot speak. */
function modelIdsOf(row: ClonedVoiceRow): string[] {
  if (row.status === 'failed') return [];
  const own = cloningModelName(row.model, 'product');
  return [own, ...SPOKEN_ON_NAMES.filter((name) => name !== own)];
}

export const ClonedVoiceBody = Type.Object({
  /** The clone's id, as the service's record id: the same as voiceId here. */
  _id: Type.String(),
  displayName: Type.String(),
  voiceId: Type.String(),
  accent: Type.String(),
  tags: Type.Array(Type.String()),
  model: Type.String(),
  status: Type.String(),
  /** Every clone Parley makes is an instant clone (from one sample, in one request). */
  cloningType: Type.Literal('instant'),
  createdAt: Type.String({ format: 'date-time' }),
  description: Type.Optional(Type.String()),
  language: Type.Optional(Type.String()),
  /** Which engine speaks it: espeak-ng-matched (the built-in match) or a zero-shot pack's. */
  engine: Type.Optional(Type.String()),
  /** Why creation failed (status `failed`). */
  error: Type.Optional(Type.String()),
  /** The models (product names) the clone speaks on, the one it was made for first; empty while it is not usable. */
  modelIds: Type.Array(Type.String()),
  /** The sample's measured voice (src/synthesis/voice-profile.ts). */
  profile: Type.Optional(
    Type.Object({
      medianF0Hz: Type.Number(),
      pitchRangeSemitones: Type.Number(),
      speakingRate: Type.Number(),
      genderClass: Type.String(),
      speechSeconds: Type.Number(),
    }),
  ),
});

export function cloneToWire(r: ClonedVoiceRow, naming: CloneNaming) {
  return {
    _id: r.id,
    displayName: r.display_name,
    voiceId: r.id,
    accent: r.accent,
    tags: JSON.parse(r.tags) as string[],
    model: cloningModelName(r.model, naming),
    status: r.status,
    cloningType: 'instant' as const,
    createdAt: r.created_at,
    modelIds: modelIdsOf(r),
    ...(r.description ? { description: r.description } : {}),
    ...(r.language ? { language: r.language } : {}),
    ...(r.engine ? { engine: r.engine } : {}),
    ...(r.status === 'failed' && r.error ? { error: r.error } : {}),
    ...(r.profile ? { profile: JSON.parse(r.profile) as object } : {}),
  };
}
