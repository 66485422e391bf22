/**
 * Neural TTS packs (voiced ones, and zero-shot ones that speak in the voice of a reference
 * sample) through sherpa-onnx's OfflineTts, run by a TaskRunner: in the server, a supervised
 * inference process, where sherpa's async calls run on libuv's pool. Packs reach this file
 * verified, with the config their family built (src/models/families).
 *
 * Creating the engine loads each pack (listing voices needs each model's speaker count and sample
 * rate, which only a load tells for sure); a pack that fails gives an EngineError naming it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AbortedError, EngineError, ParleyError } from '../../errors.js';
import type { EnginePack, PackVoice } from '../capabilities.js';
import type { SherpaOfflineTtsConfig } from '../sherpa-onnx.js';
import { modelKey } from './sherpa-pack-files.js';
import type { TaskRunner, TtsModelInfo, TtsReference, TtsTask } from '../sherpa-tasks.js';
import type { Gender, ModelGeneration, SynthesisOptions, TtsEngine, Voice } from '../types.js';

/** The parts of sherpa-onnx-node's OfflineTtsConfig (lib/types.js) that Parley fills. */
export type OfflineTtsConfig = SherpaOfflineTtsConfig;

const models: ModelGeneration[] = ['tts-large', 'tts-v2', 'tts-v3.1'];

/** sherpa-onnx ends the process when espeak-ng-data is missing, so it is checked before loading. */
function requireEspeakData(pack: EnginePack, config: OfflineTtsConfig): void {
  for (const part of Object.values(config.model)) {
    const dataDir = part && typeof part === 'object' && 'dataDir' in part ? part.dataDir : undefined;
    if (typeof dataDir === 'string' && !existsSync(join(dataDir, 'phontab'))) {
      throw new EngineError(
        `TTS pack ${pack.id} needs espeak-ng-data, and ${dataDir} has none (install Debian's espeak-ng-data or set PARLEY_SYNTHESIS__ESPEAK_DATA_DIR)`,
      );
    }
  }
}

/** One voice per speaker id; the pack's declared voices override names, gender, accent and languages. */
export function buildPackVoices(pack: EnginePack<'tts'>, numSpeakers: number, sampleRate: number): Voice[] {
  return [...packVoicesBySpeaker(pack, numSpeakers, sampleRate).values()];
}

/** The voices by speaker id; an `omit`ted speaker has none. */
function packVoicesBySpeaker(pack: EnginePack<'tts'>, numSpeakers: number, sampleRate: number): Map<number, Voice> {
  const declared = new Map<number, PackVoice>(pack.traits.voices.map((v) => [v.speakerId, v]));
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
      accent: d?.accent ?? pack.traits.defaultAccent,
      gender,
      sampleRate,
      engine: pack.traits.engineName,
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
  pack: EnginePack<'tts'>;
  key: string;
  config: OfflineTtsConfig;
  info: TtsModelInfo;
  /** The same model with another config for the voices of one accent; loaded by its first request. */
  byAccent: Map<string, LoadedPack>;
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
        this.byVoiceId.set(voice.id, { loaded: l.byAccent.get(voice.accent) ?? l, sid });
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
    for (const l of this.loaded) for (const key of [l.key, ...[...l.byAccent.values()].map((a) => a.key)]) this.runner.unload?.(key);
    this.byVoiceId.clear();
  }
}

/** Loads one pack in the runner's process: the key it is loaded under, and what sherpa says it is. */
async function loadPack(runner: TaskRunner, pack: EnginePack<'tts' | 'zero-shot-tts'>): Promise<{ key: string; info: TtsModelInfo }> {
  const { config } = pack;
  requireEspeakData(pack, config);
  const key = modelKey([pack], 'tts', config);
  try {
    return { key, info: await runner.submit({ kind: 'tts-load', key, config }) };
  } catch (err) {
    throw new EngineError(`Failed to load TTS pack ${pack.id}: ${(err as Error).message}`);
  }
}

/** Loads every pack (one after another, so start-up does not take every core at once). */
export async function createSherpaTtsEngine(runner: TaskRunner, packs: EnginePack<'tts'>[]): Promise<TtsEngine> {
  const loaded: LoadedPack[] = [];
  for (const pack of packs) {
    if (pack.capability !== 'tts') throw new EngineError(`Pack ${pack.id} (${pack.capability}) is not a TTS pack`);
    const { key, info } = await loadPack(runner, pack);
    const byAccent = new Map<string, LoadedPack>();
    for (const [accent, config] of Object.entries(pack.traits.accentConfigs)) {
      byAccent.set(accent, { pack, key: modelKey([pack], `tts-${accent}`, config), config, info, byAccent: new Map() });
    }
    loaded.push({ pack, key, config: pack.config, info, byAccent });
  }
  return new SherpaTtsEngine(runner, loaded);
}

/** A zero-shot pack loaded: it speaks in whatever voice each request's reference sample has. */
export interface ZeroShotTts {
  /** The engine a clone records, and finds its engine by again. */
  readonly name: string;
  readonly packId: string;
  /** ISO 639-1 codes the pack speaks. */
  readonly languages: readonly string[];
  readonly sampleRate: number;
  /** The model conditions on what the sample says as well as on its sound. */
  readonly needsReferenceText: boolean;
  synthesize(reference: TtsReference, text: string, options: Pick<SynthesisOptions, 'speed' | 'signal'>): AsyncIterable<Float32Array>;
  close(): Promise<void>;
  /** Keeps the engine open through a pack reload until the returned function is called (engine-set.ts). */
  hold?(): () => void;
}

export async function createZeroShotTtsEngine(runner: TaskRunner, pack: EnginePack<'zero-shot-tts'>): Promise<ZeroShotTts> {
  if (pack.capability !== 'zero-shot-tts') throw new EngineError(`Pack ${pack.id} (${pack.capability}) is not a zero-shot TTS pack`);
  const { config } = pack;
  const { key, info } = await loadPack(runner, pack);
  let closed = false;
  return {
    name: pack.traits.engineName,
    packId: pack.id,
    languages: pack.languages,
    sampleRate: info.sampleRate,
    needsReferenceText: pack.traits.needsReferenceText,
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
