/**
 * Neural TTS model packs (Piper/VITS, Kokoro, Matcha, Kitten, and the zero-shot ZipVoice and
 * Pocket TTS, which speak in the voice of a reference sample) through sherpa-onnx's OfflineTts,
 * run by a TaskRunner: in the server, a supervised inference process, where sherpa's async calls
 * run on libuv's pool. Packs must be verified (src/models/verify.ts) before they reach this file.
 *
 * Creating the engine loads each pack (listing voices needs each model's speaker count and sample
 * rate, which only a load tells for sure); a pack that fails gives an EngineError naming it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AbortedError, EngineError, ParleyError } from '../errors.js';
import type { ModelPack, PackKind, PackVoice } from './model-pack.js';
import type { SherpaOfflineTtsConfig } from './sherpa-onnx.js';
import { modelKey } from './sherpa-pack-files.js';
import type { TaskRunner, TtsModelInfo, TtsReference, TtsTask } from './sherpa-tasks.js';
import type { Gender, ModelGeneration, SynthesisOptions, TtsEngine, Voice } from './types.js';

/** Where Debian's espeak-ng-data package puts the data Piper voices phonemise with. */
export const debianEspeakDataDir = '/usr/lib/x86_64-linux-gnu/espeak-ng-data';

export interface SherpaTtsOptions {
  /** espeak-ng-data for packs that ship none. Default: Debian's path. */
  espeakDataDir?: string;
  /** ONNX Runtime intra-op threads per model. Default 1: the target machine has few cores. */
  numThreads?: number;
}

export type TtsPackKind = Extract<PackKind, 'tts-vits' | 'tts-kokoro' | 'tts-matcha' | 'tts-kitten'>;
/** Packs with no voices of their own: each request brings the voice as a reference sample. */
export type ZeroShotPackKind = Extract<PackKind, 'tts-zipvoice' | 'tts-pocket'>;

export function isZeroShotPackKind(kind: PackKind): kind is ZeroShotPackKind {
  return kind === 'tts-zipvoice' || kind === 'tts-pocket';
}

/**
 * ZipVoice's flow-matching settings, upstream's defaults (offline-tts-zipvoice-model-config.h):
 * the prompt's log-mel scale, the timestep shift, the RMS a quiet prompt is raised to, and the
 * classifier-free guidance scale.
 */
const ZIPVOICE_DEFAULTS = { featScale: 0.1, tShift: 0.5, targetRms: 0.1, guidanceScale: 1.0 } as const;

/** The parts of sherpa-onnx-node's OfflineTtsConfig (lib/types.js) that Parley fills. */
export type OfflineTtsConfig = SherpaOfflineTtsConfig;

const models: ModelGeneration[] = ['tts-large', 'tts-v2', 'tts-v3.1'];

function isTtsPackKind(kind: PackKind): kind is TtsPackKind {
  return kind === 'tts-vits' || kind === 'tts-kokoro' || kind === 'tts-matcha' || kind === 'tts-kitten';
}

function requireFile(pack: ModelPack, role: string): string {
  const path = pack.files[role];
  if (!path) throw new EngineError(`TTS pack ${pack.id} (${pack.kind}) has no "${role}" file`);
  return path;
}

/**
 * Phonemiser data for a pack: its own espeak-ng-data first; none when it has a lexicon instead
 * (sherpa ignores the lexicon when dataDir is set); else the shared espeak-ng-data.
 */
function phonemizer(pack: ModelPack, espeakDataDir: string): { lexicon?: string; dataDir?: string } {
  if (pack.files.dataDir) return { dataDir: pack.files.dataDir };
  if (pack.files.lexicon) return { lexicon: pack.files.lexicon };
  return { dataDir: espeakDataDir };
}

/** sherpa-onnx ends the process when espeak-ng-data is missing, so it is checked before loading. */
function requireEspeakData(pack: ModelPack, config: OfflineTtsConfig): void {
  const m = config.model;
  const dataDir = m.vits?.dataDir ?? m.matcha?.dataDir ?? m.kokoro?.dataDir ?? m.kitten?.dataDir ?? m.zipvoice?.dataDir;
  if (dataDir !== undefined && !existsSync(join(dataDir, 'phontab'))) {
    throw new EngineError(
      `TTS pack ${pack.id} needs espeak-ng-data, and ${dataDir} has none (install Debian's espeak-ng-data or set PARLEY_SYNTHESIS__ESPEAK_DATA_DIR)`,
    );
  }
}

/**
 * The sherpa OfflineTtsConfig for one pack. `accent: 'gb'` gives a Kokoro pack's British variant
 * (the gb lexicon first).
 */
export function buildOfflineTtsConfig(pack: ModelPack, options: SherpaTtsOptions = {}, accent?: 'gb'): OfflineTtsConfig {
  const espeakDataDir = options.espeakDataDir ?? debianEspeakDataDir;
  const base = { numThreads: options.numThreads ?? 1, provider: 'cpu' as const, debug: false };
  if (pack.kind === 'tts-pocket') return pocketConfig(pack, base);
  const tokens = requireFile(pack, 'tokens');
  let model: OfflineTtsConfig['model'];
  switch (pack.kind) {
    case 'tts-vits':
      model = { ...base, vits: { model: requireFile(pack, 'model'), tokens, ...phonemizer(pack, espeakDataDir) } };
      break;
    case 'tts-matcha':
      model = {
        ...base,
        matcha: {
          acousticModel: requireFile(pack, 'acousticModel'),
          vocoder: requireFile(pack, 'vocoder'),
          tokens,
          ...phonemizer(pack, espeakDataDir),
        },
      };
      break;
    case 'tts-kokoro':
      // Multilingual Kokoro needs both its lexicons and espeak-ng-data, so both are passed.
      model = {
        ...base,
        kokoro: {
          model: requireFile(pack, 'model'),
          voices: requireFile(pack, 'voices'),
          tokens,
          dataDir: pack.files.dataDir ?? espeakDataDir,
          ...(pack.files.lexicon ? { lexicon: (accent === 'gb' && pack.files.lexiconGb) || pack.files.lexicon } : {}),
        },
      };
      break;
    case 'tts-kitten':
      model = {
        ...base,
        kitten: {
          model: requireFile(pack, 'model'),
          voices: requireFile(pack, 'voices'),
          tokens,
          dataDir: pack.files.dataDir ?? espeakDataDir,
        },
      };
      break;
    case 'tts-zipvoice':
      // ZipVoice's frontend needs both its lexicon (Chinese, listed English words) and espeak-ng.
      model = {
        ...base,
        zipvoice: {
          tokens,
          encoder: requireFile(pack, 'encoder'),
          decoder: requireFile(pack, 'decoder'),
          vocoder: requireFile(pack, 'vocoder'),
          dataDir: pack.files.dataDir ?? espeakDataDir,
          lexicon: requireFile(pack, 'lexicon'),
          ...ZIPVOICE_DEFAULTS,
        },
      };
      break;
    default:
      throw new EngineError(`Pack ${pack.id} of kind ${pack.kind} is not a TTS pack`);
  }
  return { model, maxNumSentences: 1, ...(pack.files.ruleFsts ? { ruleFsts: pack.files.ruleFsts } : {}) };
}

/** Pocket TTS: a SentencePiece-style vocabulary instead of tokens.txt, and no phonemiser. */
function pocketConfig(pack: ModelPack, base: Pick<OfflineTtsConfig['model'], 'numThreads' | 'provider' | 'debug'>): OfflineTtsConfig {
  const pocket = {
    lmFlow: requireFile(pack, 'lmFlow'),
    lmMain: requireFile(pack, 'lmMain'),
    encoder: requireFile(pack, 'encoder'),
    decoder: requireFile(pack, 'decoder'),
    textConditioner: requireFile(pack, 'textConditioner'),
    vocabJson: requireFile(pack, 'vocabJson'),
    tokenScoresJson: requireFile(pack, 'tokenScoresJson'),
  };
  return { model: { ...base, pocket }, maxNumSentences: 1 };
}

/** Accent for packs that declare none, from the espeak voice Piper records in its metadata. */
function defaultAccent(pack: ModelPack): string {
  const espeakVoice = (pack.metadata.voice ?? '').toLowerCase();
  if (espeakVoice === 'en-us') return 'american';
  if (espeakVoice === 'en-gb' || espeakVoice === 'en-gb-x-rp') return 'british';
  return 'neutral';
}

/** One voice per speaker id; pack.voices entries override names, gender, accent and languages. */
export function buildPackVoices(pack: ModelPack, numSpeakers: number, sampleRate: number): Voice[] {
  return [...packVoicesBySpeaker(pack, numSpeakers, sampleRate).values()];
}

/** The voices by speaker id; an `omit`ted speaker has none. */
function packVoicesBySpeaker(pack: ModelPack, numSpeakers: number, sampleRate: number): Map<number, Voice> {
  const declared = new Map<number, PackVoice>(pack.voices.map((v) => [v.speakerId, v]));
  const single = numSpeakers <= 1;
  const voices = new Map<number, Voice>();
  for (let sid = 0; sid < Math.max(1, numSpeakers); sid++) {
    const d = declared.get(sid);
    if (d?.omit) continue;
    const gender: Gender = d?.gender ?? 'neutral';
    voices.set(sid, {
      id: d?.id ?? (single ? pack.id : `${pack.id}-${sid}`),
      displayName: d?.displayName ?? (single ? pack.id : `${pack.id} speaker ${sid}`),
      languages: d?.languages ?? pack.languages,
      accent: d?.accent ?? defaultAccent(pack),
      gender,
      sampleRate,
      engine: `sherpa-${pack.kind.slice('tts-'.length)}`,
      models,
    });
  }
  return voices;
}

/**
 * Runs one TTS task and yields its audio as the process sends it. The task is stopped in its
 * process when the consumer stops early or `signal` aborts (the client went away).
 */
async function* streamTts(runner: TaskRunner, task: TtsTask, packId: string, signal?: AbortSignal): AsyncIterable<Float32Array> {
  const chunks: Float32Array[] = [];
  let finished = false;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const notify = (): void => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const stop = new AbortController();
  const forward = (): void => stop.abort();
  signal?.addEventListener('abort', forward, { once: true });
  runner
    .submit(task, {
      signal: stop.signal,
      onProgress: (samples) => {
        chunks.push(samples);
        notify();
      },
    })
    .then(
      () => undefined,
      (error: unknown) => {
        failure = error instanceof ParleyError ? error : new EngineError(`TTS model ${packId} failed: ${(error as Error).message}`);
      },
    )
    .finally(() => {
      finished = true;
      notify();
    });
  try {
    for (;;) {
      if (signal?.aborted) throw new AbortedError();
      const chunk = chunks.shift();
      if (chunk) {
        yield chunk;
        continue;
      }
      if (failure) throw failure;
      if (finished) return;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    if (!finished) stop.abort();
    signal?.removeEventListener('abort', forward);
  }
}

interface LoadedPack {
  pack: ModelPack;
  key: string;
  config: OfflineTtsConfig;
  info: TtsModelInfo;
  /** Kokoro's British variant: same model, gb lexicon first; loaded by its first request. */
  gb?: LoadedPack;
}

class SherpaTtsEngine implements TtsEngine {
  readonly name = 'sherpa-onnx';
  private readonly voices: Voice[] = [];
  private readonly byVoiceId = new Map<string, { loaded: LoadedPack; sid: number }>();
  private closed = false;

  constructor(
    private readonly runner: TaskRunner,
    private readonly loaded: LoadedPack[],
  ) {
    for (const l of loaded) {
      packVoicesBySpeaker(l.pack, l.info.numSpeakers, l.info.sampleRate).forEach((voice, sid) => {
        if (this.byVoiceId.has(voice.id)) return;
        this.voices.push(voice);
        this.byVoiceId.set(voice.id, { loaded: l.gb && voice.accent === 'gb' ? l.gb : l, sid });
      });
    }
  }

  listVoices(): Voice[] {
    return this.voices;
  }

  /**
   * `speed` goes to sherpa's speed (length scale = model length scale / speed). `consistency` is
   * not applied: VITS/Matcha noise scales are load-time settings in sherpa-onnx-node 1.13.8
   * (OfflineTtsVitsModelConfig) with no per-request override, so every request uses the model's
   * defaults (noise 0.667, duration noise 0.8).
   */
  async *synthesize(voice: Voice, text: string, options: SynthesisOptions): AsyncIterable<Float32Array> {
    const target = this.byVoiceId.get(voice.id);
    if (!target || this.closed) throw new EngineError(`No loaded TTS model serves voice ${voice.id}`);
    const { loaded, sid } = target;
    if (options.signal?.aborted) throw new AbortedError();

    yield* streamTts(this.runner, { kind: 'tts', key: loaded.key, config: loaded.config, text, sid, speed: options.speed }, loaded.pack.id, options.signal);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const l of this.loaded) for (const key of [l.key, l.gb?.key]) if (key) this.runner.unload?.(key);
    this.byVoiceId.clear();
  }
}

/** Loads one pack in the runner's process: its config, the key it is loaded under, and what sherpa says it is. */
async function loadPack(runner: TaskRunner, pack: ModelPack, options: SherpaTtsOptions): Promise<{ config: OfflineTtsConfig; key: string; info: TtsModelInfo }> {
  const config = buildOfflineTtsConfig(pack, options);
  requireEspeakData(pack, config);
  const key = modelKey([pack], 'tts', config);
  try {
    return { config, key, info: await runner.submit({ kind: 'tts-load', key, config }) };
  } catch (err) {
    throw new EngineError(`Failed to load TTS pack ${pack.id}: ${(err as Error).message}`);
  }
}

/** Loads every pack (one after another, so start-up does not take every core at once). */
export async function createSherpaTtsEngine(runner: TaskRunner, packs: ModelPack[], options: SherpaTtsOptions = {}): Promise<TtsEngine> {
  const loaded: LoadedPack[] = [];
  for (const pack of packs) {
    if (!isTtsPackKind(pack.kind)) throw new EngineError(`Pack ${pack.id} of kind ${pack.kind} is not a TTS pack`);
    const { config, key, info } = await loadPack(runner, pack, options);
    const gbConfig = pack.files.lexiconGb ? buildOfflineTtsConfig(pack, options, 'gb') : undefined;
    const gb = gbConfig && { pack, key: modelKey([pack], 'tts-gb', gbConfig), config: gbConfig, info };
    loaded.push({ pack, key, config, info, ...(gb ? { gb } : {}) });
  }
  return new SherpaTtsEngine(runner, loaded);
}

/** A zero-shot pack loaded: it speaks in whatever voice each request's reference sample has. */
export interface ZeroShotTts {
  /** The engine a clone records: "zipvoice" or "pocket-tts". */
  readonly name: string;
  readonly packId: string;
  /** ISO 639-1 codes the pack speaks. */
  readonly languages: readonly string[];
  readonly sampleRate: number;
  /** ZipVoice conditions on what the sample says as well as on its sound. */
  readonly needsReferenceText: boolean;
  synthesize(reference: TtsReference, text: string, options: Pick<SynthesisOptions, 'speed' | 'signal'>): AsyncIterable<Float32Array>;
  close(): Promise<void>;
  /** Keeps the engine open through a pack reload until the returned function is called (engine-set.ts). */
  hold?(): () => void;
}

export const zeroShotEngineName = (kind: ZeroShotPackKind): string => (kind === 'tts-zipvoice' ? 'zipvoice' : 'pocket-tts');

export async function createZeroShotTtsEngine(runner: TaskRunner, pack: ModelPack, options: SherpaTtsOptions = {}): Promise<ZeroShotTts> {
  const { kind } = pack;
  if (!isZeroShotPackKind(kind)) throw new EngineError(`Pack ${pack.id} of kind ${pack.kind} is not a zero-shot TTS pack`);
  const { config, key, info } = await loadPack(runner, pack, options);
  let closed = false;
  return {
    name: zeroShotEngineName(kind),
    packId: pack.id,
    languages: pack.languages,
    sampleRate: info.sampleRate,
    needsReferenceText: kind === 'tts-zipvoice',
    async *synthesize(reference, text, o) {
      if (closed) throw new EngineError(`TTS pack ${pack.id} is closed`);
      if (o.signal?.aborted) throw new AbortedError();
      let samples = 0;
      for await (const piece of streamTts(runner, { kind: 'tts', key, config, text, sid: 0, speed: o.speed, reference }, pack.id, o.signal)) {
        samples += piece.length;
        yield piece;
      }
      // sherpa answers a reference it cannot use (no words in its transcript, no frames) with
      // empty audio and a log line, not an error.
      if (samples === 0 && /[\p{L}\p{N}]/u.test(text)) throw new EngineError(`TTS pack ${pack.id} produced no audio for the clone's reference sample`);
    },
    close: async () => {
      closed = true;
      runner.unload?.(key);
    },
  };
}
