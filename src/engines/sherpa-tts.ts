/**
 * Neural TTS model packs (Piper/VITS, Kokoro, Matcha, Kitten) through sherpa-onnx's OfflineTts,
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
import type { TaskRunner, TtsModelInfo } from './sherpa-tasks.js';
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
  const dataDir = m.vits?.dataDir ?? m.matcha?.dataDir ?? m.kokoro?.dataDir ?? m.kitten?.dataDir;
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
    default:
      throw new EngineError(`Pack ${pack.id} of kind ${pack.kind} is not a TTS pack`);
  }
  return { model, maxNumSentences: 1, ...(pack.files.ruleFsts ? { ruleFsts: pack.files.ruleFsts } : {}) };
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

    const chunks: Float32Array[] = [];
    let finished = false;
    let failure: Error | undefined;
    let wake: (() => void) | undefined;
    const notify = (): void => {
      const w = wake;
      wake = undefined;
      w?.();
    };
    // Stops the task in its process when the consumer stops early or the client goes away.
    const stop = new AbortController();
    const forward = (): void => stop.abort();
    options.signal?.addEventListener('abort', forward, { once: true });
    this.runner
      .submit(
        { kind: 'tts', key: loaded.key, config: loaded.config, text, sid, speed: options.speed },
        {
          signal: stop.signal,
          onProgress: (samples) => {
            chunks.push(samples);
            notify();
          },
        },
      )
      .then(
        () => undefined,
        (error: unknown) => {
          failure = error instanceof ParleyError ? error : new EngineError(`TTS model ${loaded.pack.id} failed: ${(error as Error).message}`);
        },
      )
      .finally(() => {
        finished = true;
        notify();
      });
    try {
      for (;;) {
        if (options.signal?.aborted) throw new AbortedError();
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
      options.signal?.removeEventListener('abort', forward);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const l of this.loaded) for (const key of [l.key, l.gb?.key]) if (key) this.runner.unload?.(key);
    this.byVoiceId.clear();
  }
}

/** Loads every pack (one after another, so start-up does not take every core at once). */
export async function createSherpaTtsEngine(runner: TaskRunner, packs: ModelPack[], options: SherpaTtsOptions = {}): Promise<TtsEngine> {
  const loaded: LoadedPack[] = [];
  for (const pack of packs) {
    if (!isTtsPackKind(pack.kind)) throw new EngineError(`Pack ${pack.id} of kind ${pack.kind} is not a TTS pack`);
    const config = buildOfflineTtsConfig(pack, options);
    requireEspeakData(pack, config);
    const key = modelKey([pack], 'tts', config);
    let info: TtsModelInfo;
    try {
      info = await runner.submit({ kind: 'tts-load', key, config });
    } catch (err) {
      throw new EngineError(`Failed to load TTS pack ${pack.id}: ${(err as Error).message}`);
    }
    const gbConfig = pack.files.lexiconGb ? buildOfflineTtsConfig(pack, options, 'gb') : undefined;
    const gb = gbConfig && { pack, key: modelKey([pack], 'tts-gb', gbConfig), config: gbConfig, info };
    loaded.push({ pack, key, config, info, ...(gb ? { gb } : {}) });
  }
  return new SherpaTtsEngine(runner, loaded);
}
