/**
 * The one table of names under which the service's routes are served. Clients in the wild use the
 * product names (`lightning-v3.1`, `pulse`) under `/api/v1` and, since the service moved them,
 * under `/waves/v1`; Parley's neutral names (`tts-v2`, `stt`) stay too. Every route family
 * registers its handlers once per entry here: aliases are routing, never copies of handlers.
 */
import type { ModelGeneration } from '../../engines/types.js';

/** Where the per-model routes live: `<prefix>/<path name>/…`. */
export const ROUTE_PREFIXES = ['/api/v1', '/waves/v1'] as const;
export type RoutePrefix = (typeof ROUTE_PREFIXES)[number];

export interface SpeechRouteName {
  /** The path segment: `/api/v1/<path>/get_speech`. */
  path: string;
  model: ModelGeneration;
  /** Answered with `Deprecation: true` (and a successor link where one is known). */
  deprecated: boolean;
}

/** Synthesis path names, each served for its model's operations only. */
export const SPEECH_ROUTE_NAMES: readonly SpeechRouteName[] = [
  { path: 'tts-large', model: 'tts-large', deprecated: true },
  { path: 'tts-v2', model: 'tts-v2', deprecated: false },
  { path: 'tts-v3.1', model: 'tts-v3.1', deprecated: false },
  // The original product model; its nearest generation serves it.
  { path: 'lightning', model: 'tts-v2', deprecated: true },
  { path: 'lightning-large', model: 'tts-large', deprecated: true },
  { path: 'lightning-v2', model: 'tts-v2', deprecated: false },
  { path: 'lightning-v3.1', model: 'tts-v3.1', deprecated: false },
];

/** Transcription path names: `/api/v1/<path>/get_text`. */
export const TRANSCRIPTION_ROUTE_NAMES: readonly string[] = ['stt', 'pulse'];

/** `model` values in bodies and queries, as real clients spell them, to Parley's synthesis models. */
const SPEECH_MODEL_VALUES: Readonly<Record<string, ModelGeneration>> = {
  'tts-large': 'tts-large',
  'tts-v2': 'tts-v2',
  'tts-v3.1': 'tts-v3.1',
  lightning: 'tts-v2',
  'lightning-large': 'tts-large',
  lightning_large: 'tts-large',
  'lightning-v2': 'tts-v2',
  lightning_v2: 'tts-v2',
  'lightning-v3.1': 'tts-v3.1',
  'lightning_v3.1': 'tts-v3.1',
  'lightning_v3.1_pro': 'tts-v3.1',
  'lightning-v3.1-pro': 'tts-v3.1',
};

/** Every synthesis `model` value accepted on the wire. */
export const SPEECH_MODEL_SPELLINGS: readonly string[] = Object.keys(SPEECH_MODEL_VALUES);

/** The synthesis model a wire `model` value names, or undefined for a value no client sends. */
export function speechModelOf(value: string): ModelGeneration | undefined {
  return Object.hasOwn(SPEECH_MODEL_VALUES, value) ? SPEECH_MODEL_VALUES[value] : undefined;
}

/** Every transcription `model` value accepted on the wire (all name the one recogniser pipeline). */
export const TRANSCRIPTION_MODEL_SPELLINGS: readonly string[] = ['stt', 'pulse', 'pulse-pro'];
