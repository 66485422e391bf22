/**
 * The settings of an OpenAI Realtime transcription session, and how both spellings of its update
 * are read into them: `session.update` with `session.type: "transcription"` and
 * `session.audio.input.{format, transcription, turn_detection, noise_reduction}`, and the older
 * `transcription_session.update` with `session.{input_audio_format, input_audio_transcription,
 * turn_detection, input_audio_noise_reduction}`. A field left out keeps its value; a bad one is a
 * RealtimeEventError naming its path, and changes nothing.
 */
import type { StreamEncoding } from '../../../audio/stream-decoder.js';
import { sttLanguages } from '../../schemas/transcription-query.js';

export interface AudioFormat {
  /** The older name (pcm16, g711_ulaw, g711_alaw). */
  name: 'pcm16' | 'g711_ulaw' | 'g711_alaw';
  encoding: StreamEncoding;
  sampleRate: number;
}

export const audioFormats: readonly AudioFormat[] = [
  { name: 'pcm16', encoding: 'linear16', sampleRate: 24_000 },
  { name: 'g711_ulaw', encoding: 'mulaw', sampleRate: 8_000 },
  { name: 'g711_alaw', encoding: 'alaw', sampleRate: 8_000 },
];
const mediaTypes: Record<AudioFormat['name'], string> = { pcm16: 'audio/pcm', g711_ulaw: 'audio/pcmu', g711_alaw: 'audio/pcma' };

export interface ServerVad {
  type: 'server_vad';
  threshold: number;
  prefix_padding_ms: number;
  silence_duration_ms: number;
}

export interface TranscriptionSettings {
  format: AudioFormat;
  model: string;
  /** '' = the server's default language. */
  language: string;
  prompt: string;
  /** null: the client commits each turn itself. */
  turnDetection: ServerVad | null;
  noiseReduction: { type: 'near_field' | 'far_field' } | null;
}

/** OpenAI's defaults for server VAD. */
export const defaultServerVad: ServerVad = { type: 'server_vad', threshold: 0.5, prefix_padding_ms: 300, silence_duration_ms: 500 };
/**
 * semantic_vad's eagerness read as the pause that ends a turn (Parley's VAD judges pauses, not
 * meaning). A Map, so that only these names are found: a plain object would also answer names
 * every object inherits (`constructor`, `toString`, `__proto__`).
 */
const eagernessSilenceMs: ReadonlyMap<string, number> = new Map([
  ['low', 1_000],
  ['medium', 500],
  ['auto', 500],
  ['high', 250],
]);

/** An `error` event: OpenAI's error type and code, and the field at fault. */
export class RealtimeEventError extends Error {
  constructor(
    message: string,
    readonly param: string | null = null,
    readonly code = 'invalid_value',
    readonly errorType = 'invalid_request_error',
  ) {
    super(message);
  }
}

export interface SettingsChecks {
  /** Whether a `model` names a transcription model Parley lists. */
  isTranscriptionModel(model: string): boolean;
}

type Json = Record<string, unknown>;

function object(value: unknown, param: string): Json | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new RealtimeEventError(`${param} must be an object`, param);
  return value as Json;
}

function numberIn(value: unknown, param: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) throw new RealtimeEventError(`${param} must be a number from ${min} to ${max}`, param);
  return value;
}

function turnDetection(value: unknown, param: string, current: ServerVad | null): ServerVad | null {
  if (value === null) return null;
  const given = object(value, param);
  if (!given) return current;
  const base = current ?? defaultServerVad;
  const type = given.type ?? 'server_vad';
  if (type === 'semantic_vad') {
    const eagerness = given.eagerness ?? 'auto';
    const silenceMs = typeof eagerness === 'string' ? eagernessSilenceMs.get(eagerness) : undefined;
    if (silenceMs === undefined) throw new RealtimeEventError(`${param}.eagerness must be low, medium, high or auto`, `${param}.eagerness`);
    return { ...defaultServerVad, silence_duration_ms: silenceMs };
  }
  if (type !== 'server_vad') throw new RealtimeEventError(`${param}.type must be server_vad, semantic_vad, or turn_detection null for manual commits`, `${param}.type`);
  return {
    type: 'server_vad',
    threshold: numberIn(given.threshold, `${param}.threshold`, 0, 1, base.threshold),
    prefix_padding_ms: numberIn(given.prefix_padding_ms, `${param}.prefix_padding_ms`, 0, 5_000, base.prefix_padding_ms),
    silence_duration_ms: numberIn(given.silence_duration_ms, `${param}.silence_duration_ms`, 100, 10_000, base.silence_duration_ms),
  };
}

function noiseReduction(value: unknown, param: string, current: TranscriptionSettings['noiseReduction']): TranscriptionSettings['noiseReduction'] {
  if (value === null) return null;
  const given = object(value, param);
  if (!given) return current;
  if (given.type !== 'near_field' && given.type !== 'far_field') throw new RealtimeEventError(`${param}.type must be near_field or far_field`, `${param}.type`);
  return { type: given.type };
}

function transcription(value: unknown, param: string, settings: TranscriptionSettings, checks: SettingsChecks): Pick<TranscriptionSettings, 'model' | 'language' | 'prompt'> {
  const given = object(value, param) ?? {};
  const model = given.model ?? settings.model;
  if (typeof model !== 'string' || !checks.isTranscriptionModel(model)) {
    throw new RealtimeEventError(`${param}.model must be a transcription model Parley lists (whisper-1, gpt-4o-transcribe, gpt-4o-mini-transcribe, or an installed recogniser: GET /v1/models)`, `${param}.model`);
  }
  const language = given.language ?? settings.language;
  if (typeof language !== 'string' || (language !== '' && !(sttLanguages as readonly string[]).includes(language))) {
    throw new RealtimeEventError(`${param}.language must be an ISO 639-1 code Parley transcribes: ${sttLanguages.join(', ')}`, `${param}.language`);
  }
  const prompt = given.prompt ?? settings.prompt;
  if (typeof prompt !== 'string') throw new RealtimeEventError(`${param}.prompt must be a string`, `${param}.prompt`);
  return { model, language, prompt };
}

function formatOf(value: unknown, param: string, current: AudioFormat): AudioFormat {
  const given = object(value, param);
  if (!given) return current;
  const name = (Object.keys(mediaTypes) as AudioFormat['name'][]).find((n) => mediaTypes[n] === (given.type ?? 'audio/pcm'));
  if (!name) throw new RealtimeEventError(`${param}.type must be audio/pcm, audio/pcmu or audio/pcma`, `${param}.type`);
  if (name === 'pcm16' && given.rate !== undefined && given.rate !== 24_000) throw new RealtimeEventError(`${param}.rate must be 24000`, `${param}.rate`);
  return audioFormats.find((f) => f.name === name)!;
}

/** The settings after a `session.update` (GA shape). */
export function applySessionUpdate(session: unknown, settings: TranscriptionSettings, checks: SettingsChecks): TranscriptionSettings {
  const s = object(session, 'session');
  if (!s) throw new RealtimeEventError('session is required', 'session', 'missing_required_parameter');
  if (s.type !== undefined && s.type !== 'transcription') {
    throw new RealtimeEventError('Parley serves transcription sessions only: session.type must be "transcription"', 'session.type');
  }
  const input = object(object(s.audio, 'session.audio')?.input, 'session.audio.input') ?? {};
  const p = 'session.audio.input';
  return {
    format: formatOf(input.format, `${p}.format`, settings.format),
    ...transcription(input.transcription, `${p}.transcription`, settings, checks),
    turnDetection: turnDetection(input.turn_detection, `${p}.turn_detection`, settings.turnDetection),
    noiseReduction: noiseReduction(input.noise_reduction, `${p}.noise_reduction`, settings.noiseReduction),
  };
}

/** The settings after a `transcription_session.update` (the older shape). */
export function applyTranscriptionSessionUpdate(session: unknown, settings: TranscriptionSettings, checks: SettingsChecks): TranscriptionSettings {
  const s = object(session, 'session');
  if (!s) throw new RealtimeEventError('session is required', 'session', 'missing_required_parameter');
  let format = settings.format;
  if (s.input_audio_format !== undefined) {
    const found = audioFormats.find((f) => f.name === s.input_audio_format);
    if (!found) throw new RealtimeEventError('session.input_audio_format must be pcm16, g711_ulaw or g711_alaw', 'session.input_audio_format');
    format = found;
  }
  return {
    format,
    ...transcription(s.input_audio_transcription, 'session.input_audio_transcription', settings, checks),
    turnDetection: turnDetection(s.turn_detection, 'session.turn_detection', settings.turnDetection),
    noiseReduction: noiseReduction(s.input_audio_noise_reduction, 'session.input_audio_noise_reduction', settings.noiseReduction),
  };
}

/** The session as `session.created` / `session.updated` show it. */
export function describeSession(id: string, settings: TranscriptionSettings, language: string) {
  const format = settings.format.name === 'pcm16' ? { type: 'audio/pcm', rate: 24_000 } : { type: mediaTypes[settings.format.name] };
  return {
    type: 'transcription',
    object: 'realtime.transcription_session',
    id,
    audio: {
      input: {
        format,
        transcription: { model: settings.model, language, prompt: settings.prompt },
        turn_detection: settings.turnDetection,
        noise_reduction: settings.noiseReduction,
      },
    },
    include: [],
  };
}

/** The session as `transcription_session.updated` shows it (the older shape). */
export function describeTranscriptionSession(id: string, settings: TranscriptionSettings, language: string) {
  return {
    id,
    object: 'realtime.transcription_session',
    input_audio_format: settings.format.name,
    input_audio_transcription: { model: settings.model, language, prompt: settings.prompt },
    turn_detection: settings.turnDetection,
    input_audio_noise_reduction: settings.noiseReduction,
    include: [],
  };
}
