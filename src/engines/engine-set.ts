/**
 * Every engine built from the usable model packs, as one unit: start-up builds one, a model
 * reload builds the next and swaps it in whole. A pack whose engine fails to load is reported in
 * `failed` and left out; the others still load.
 */
import type { ModelPack } from '../models/pack.js';
import { startAudioTaggingWorker, audioTaggingFilesFromPack, type AudioTaggingWorker } from '../transcription/analysis/audio-tagging-runner.js';
import type { StreamingVoiceActivityDetector } from '../transcription/pipeline.js';
import { createDiarizer } from './sherpa-diarizer.js';
import { createOfflineRecognizer, offlinePackKinds } from './sherpa-offline-recognizer.js';
import { createOnlineRecognizer } from './sherpa-online-recognizer.js';
import { createSherpaTtsEngine } from './sherpa-tts.js';
import { createSherpaVad } from './sherpa-vad.js';
import type { Diarizer, Recognizer, TtsEngine } from './types.js';
import type { WorkerPool } from './worker-pool.js';

export interface EngineSet {
  /** One neural TTS engine per TTS pack (the built-in eSpeak engine lives outside the set). */
  tts: TtsEngine[];
  vad?: StreamingVoiceActivityDetector;
  recognizers: Recognizer[];
  diarizer?: Diarizer;
  audioTagging?: AudioTaggingWorker;
  /** Packs that passed verification but whose engine would not load. */
  failed: Array<{ pack: string; reason: string }>;
  close(): Promise<void>;
}

export interface EngineSetOptions {
  pool: WorkerPool;
  espeakDataDir: string;
  numThreads: number;
  diarizationThreshold: number;
}

export async function loadEngineSet(packs: ModelPack[], options: EngineSetOptions): Promise<EngineSet> {
  const set: EngineSet = {
    tts: [],
    recognizers: [],
    failed: [],
    async close() {
      await Promise.allSettled([...set.tts.map((e) => e.close()), ...set.recognizers.map((r) => r.close()), set.diarizer?.close(), set.audioTagging?.close()]);
    },
  };
  const attempt = async (pack: ModelPack, load: () => Promise<void>) => {
    try {
      await load();
    } catch (err) {
      set.failed.push({ pack: pack.id, reason: (err as Error).message });
    }
  };
  const ofKind = (kind: ModelPack['kind']) => packs.filter((p) => p.kind === kind);

  for (const pack of packs.filter((p) => p.kind.startsWith('tts-'))) {
    await attempt(pack, async () => {
      set.tts.push(await createSherpaTtsEngine([pack], { espeakDataDir: options.espeakDataDir, numThreads: options.numThreads }));
    });
  }

  const vad = ofKind('vad-silero')[0];
  if (vad) await attempt(vad, async () => void (set.vad = createSherpaVad(options.pool, vad)));

  // Offline recognisers first: they are the accurate ones when a language has both kinds.
  for (const pack of packs.filter((p) => (offlinePackKinds as readonly string[]).includes(p.kind))) {
    await attempt(pack, async () => {
      set.recognizers.push(await createOfflineRecognizer(pack, { numThreads: options.numThreads }));
    });
  }
  for (const pack of ofKind('asr-online-transducer')) {
    await attempt(pack, async () => void set.recognizers.push(createOnlineRecognizer(options.pool, pack)));
  }

  const segmentation = ofKind('diarization-segmentation')[0];
  const embedding = ofKind('speaker-embedding')[0];
  if (segmentation && embedding) {
    await attempt(segmentation, async () => {
      set.diarizer = createDiarizer(options.pool, segmentation, embedding, { threshold: options.diarizationThreshold });
    });
  }

  const tagging = ofKind('audio-tagging')[0];
  if (tagging) await attempt(tagging, async () => void (set.audioTagging = await startAudioTaggingWorker(audioTaggingFilesFromPack(tagging))));
  return set;
}
