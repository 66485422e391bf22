/**
 * The one table of names under which the service's routes are served. Clients in the wild use the
 * product names (`lightning-v3.1`, `pulse`) under `/api/v1` and, since the service moved them,
 * under `/waves/v1`; Parley's neutral names (`tts-v2`, `stt`) stay too. Every route family
 * registers its handlers once per entry here: aliases are routing, never copies of handlers.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ModelGeneration } from '../../engines/types.js';
import type { ProductSpeechModel } from '../../synthesis/languages.js';

/** Where the per-model routes live: `<prefix>/<path name>/…`. */
export const ROUTE_PREFIXES = ['/api/v1', '/waves/v1'] as const;
export type RoutePrefix = (typeof ROUTE_PREFIXES)[number];

/**
 * What a path name serves: `stream` and `get_speech` (synthesis), `get_voices`, `add_voice`, and
 * `clones` (`get_cloned_voices` and `DELETE <prefix>/<path>`).
 */
export type SpeechOperation = 'stream' | 'get_speech' | 'get_voices' | 'add_voice' | 'clones';

export interface SpeechRouteName {
  /** The path segment: `/api/v1/<path>/get_speech`. */
  path: string;
  model: ModelGeneration;
  /** Answered with `Deprecation: true` (and a successor link where one is known). */
  deprecated: boolean;
  operations: readonly SpeechOperation[];
  /**
   * For a name the hosted service has retired (it answers 410 there): the day it did, and the name
   * that replaced it. Parley keeps serving the name; its answers say when and what replaced it.
   */
  retiredUpstream?: { date: string; successor: string };
}

/** The hosted service's retirement of lightning-v2 and lightning-large. */
const RETIRED_FOR_V31 = { date: '2026-05-19', successor: 'lightning-v3.1' } as const;

/** Synthesis path names, each served for its model's operations only. */
export const SPEECH_ROUTE_NAMES: readonly SpeechRouteName[] = [
  { path: 'tts-large', model: 'tts-large', deprecated: true, operations: ['stream', 'add_voice', 'clones'] },
  { path: 'tts-v2', model: 'tts-v2', deprecated: false, operations: ['stream', 'get_speech', 'get_voices'] },
  { path: 'tts-v3.1', model: 'tts-v3.1', deprecated: false, operations: ['stream', 'get_speech', 'get_voices', 'add_voice'] },
  // The original product model; its nearest generation serves it.
  { path: 'lightning', model: 'tts-v2', deprecated: true, operations: ['stream', 'get_speech', 'get_voices'] },
  // The official Node SDK calls get_speech and get_voices here too.
  { path: 'lightning-large', model: 'tts-large', deprecated: true, operations: ['stream', 'get_speech', 'get_voices', 'add_voice', 'clones'], retiredUpstream: RETIRED_FOR_V31 },
  { path: 'lightning-v2', model: 'tts-v2', deprecated: true, operations: ['stream', 'get_speech', 'get_voices'], retiredUpstream: RETIRED_FOR_V31 },
  { path: 'lightning-v3.1', model: 'tts-v3.1', deprecated: false, operations: ['stream', 'get_speech', 'get_voices', 'add_voice'] },
  // The Pro pool: its voices here, its speech through /tts with model lightning_v3.1_pro.
  { path: 'lightning-v3.1-pro', model: 'tts-v3.1', deprecated: false, operations: ['get_voices'] },
];

/** The path names that serve an operation. */
export function speechRouteNamesFor(operation: SpeechOperation): SpeechRouteName[] {
  return SPEECH_ROUTE_NAMES.filter((name) => name.operations.includes(operation));
}

/** Whether a path name is the product's (`lightning-v3.1`), served as the service serves it today, rather than a neutral one (`tts-v3.1`). */
export function isProductName(path: string): boolean {
  return path.startsWith('lightning');
}

/** The product names (`lightning-v3.1`, …) a model speaks under, as the clone list's `modelIds` gives them. */
export function productNamesOf(model: ModelGeneration): string[] {
  return SPEECH_ROUTE_NAMES.filter((name) => name.model === model && isProductName(name.path) && name.operations.includes('stream')).map((name) => name.path);
}

/**
 * The synthesis sockets of one prefix: `/<name>/get_speech/stream` for every name, and with `live`
 * (the current layout) `/tts/live`, whose messages name the model, and the retired
 * `/streaming-tts/stream`, whose messages are lightning-v2's.
 */
export function speechSocketRoutes(live: boolean): { path: string; name: string | undefined; model: ModelGeneration | undefined; deprecated: boolean }[] {
  const routes = speechRouteNamesFor('stream').map(({ path, model, deprecated }) => ({ path: `/${path}/get_speech/stream`, name: path as string | undefined, model: model as ModelGeneration | undefined, deprecated }));
  // The retired stream-tts socket's messages are lightning-v2's.
  if (live) routes.push({ path: LIVE_SOCKET, name: undefined, model: undefined, deprecated: false }, { path: RETIRED_STREAM_SOCKET, name: 'lightning-v2', model: 'tts-v2', deprecated: true });
  return routes;
}

const LIVE_SOCKET = '/tts/live';
const RETIRED_STREAM_SOCKET = '/streaming-tts/stream';

/**
 * The headers of a deprecated route (its URL as registered): `Deprecation: true`; for a name the
 * hosted service retired, `Sunset` (the day it did) and a `Link` to the route that replaced it
 * (cloning and the clone list moved to `/waves/v1/voice-cloning`, deletion to none, the rest keep
 * their paths under the successor's name); else a `Link` to the successor's documentation when one
 * is configured.
 */
export function deprecationHeaders(routeUrl: string, successorDocsUrl?: string): Record<string, string> {
  const headers: Record<string, string> = { Deprecation: 'true' };
  const prefix = ROUTE_PREFIXES.find((candidate) => routeUrl.startsWith(`${candidate}/`));
  const rest = prefix === undefined ? '' : routeUrl.slice(prefix.length);
  const [, name = '', ...operation] = rest.split('/');
  const retired = SPEECH_ROUTE_NAMES.find((candidate) => candidate.path === name)?.retiredUpstream;
  let successor = successorDocsUrl;
  if (rest === RETIRED_STREAM_SOCKET) successor = `${prefix}${LIVE_SOCKET}`;
  if (retired) {
    headers.Sunset = new Date(`${retired.date}T00:00:00Z`).toUTCString();
    const path = operation.join('/');
    if (path === '') successor = undefined;
    else if (path === 'add_voice' || path === 'get_cloned_voices') successor = '/waves/v1/voice-cloning';
    else successor = `${prefix}/${retired.successor}/${path}`;
  }
  if (successor) headers.Link = `<${successor}>; rel="successor-version"`;
  return headers;
}

/** The onRequest hook of a deprecated route: its {@link deprecationHeaders}. */
export function markDeprecated(successorDocsUrl: string | undefined) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    reply.headers(deprecationHeaders(request.routeOptions.url ?? '', successorDocsUrl));
  };
}

/** Transcription path names: `/api/v1/<path>/get_text`, `/api/v1/<path>/jobs/:request_id`. */
export const TRANSCRIPTION_ROUTE_NAMES: readonly string[] = ['stt', 'pulse'];

/** Whether a transcription route follows the service's rules of today (its language codes, numbers as spoken, itn_normalize, webhook_method, octet-stream uploads): every route of the current layout, and the `pulse` name; `/api/v1/stt` keeps the seed's. */
export function followsProductLanguages(layout: RouteLayout, name: string): boolean {
  return layout === 'current' || name !== 'stt';
}

/** The layout a prefix serves: the legacy one keeps the original API's error bodies, the current one the service's. */
export type RouteLayout = 'legacy' | 'current';
export const layoutOf = (prefix: RoutePrefix): RouteLayout => (prefix === '/waves/v1' ? 'current' : 'legacy');

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

/**
 * Path names and `model` values that follow the service's product models' language rules (more
 * codes, routing); every other name keeps the seed's rules of its generation.
 */
const PRODUCT_MODEL_VALUES: Readonly<Record<string, ProductSpeechModel>> = {
  'lightning-v3.1': 'lightning_v3.1',
  'lightning_v3.1': 'lightning_v3.1',
  'lightning_v3.1_pro': 'lightning_v3.1_pro',
  'lightning-v3.1-pro': 'lightning_v3.1_pro',
};

/** The product model whose language rules a path name or `model` value follows; undefined for the seed's. */
export function productModelOf(value: string | undefined): ProductSpeechModel | undefined {
  return value !== undefined && Object.hasOwn(PRODUCT_MODEL_VALUES, value) ? PRODUCT_MODEL_VALUES[value] : undefined;
}

/** `model` values of the product's retired models: still served, answered with `Deprecation: true`. */
const DEPRECATED_SPEECH_MODEL_VALUES: ReadonlySet<string> = new Set(['tts-large', 'lightning', 'lightning-large', 'lightning_large', 'lightning-v2', 'lightning_v2']);

export function isDeprecatedSpeechModelValue(value: string): boolean {
  return DEPRECATED_SPEECH_MODEL_VALUES.has(value);
}

/** The `model` of `POST /waves/v1/tts` when the body names none. */
export const DEFAULT_SPEECH_MODEL_VALUE = 'lightning_v3.1';

/** Every synthesis `model` value accepted on the wire. */
export const SPEECH_MODEL_SPELLINGS: readonly string[] = Object.keys(SPEECH_MODEL_VALUES);

/** The synthesis model a wire `model` value names, or undefined for a value no client sends. */
export function speechModelOf(value: string): ModelGeneration | undefined {
  return Object.hasOwn(SPEECH_MODEL_VALUES, value) ? SPEECH_MODEL_VALUES[value] : undefined;
}

/** Every transcription `model` value accepted on the wire (all name the one recogniser pipeline). */
export const TRANSCRIPTION_MODEL_SPELLINGS: readonly string[] = ['stt', 'pulse', 'pulse-pro'];
