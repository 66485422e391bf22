/** The routes of OpenAI's API (/v1), built from the same use cases as Parley's own routes. */
import type { FfmpegEncoder } from '../../../audio/ffmpeg-encode.js';
import type { Config } from '../../../config.js';
import type { CatalogueEntry } from '../../../models/catalogue.js';
import type { ModelsReport } from '../../../models/installed-models.js';
import type { SynthesisService } from '../../../synthesis/synthesize.js';
import type { VoiceRegistry } from '../../../synthesis/voice-registry.js';
import type { HeldEngines } from '../../../transcription/transcribe.js';
import type { Transcribe } from '../../../transcription/types.js';
import type { RealtimeSockets } from '../../plugins/realtime-sockets.js';
import type { RouteRegistrar } from '../registrar.js';
import { SpeechModels } from './aliases.js';
import { openAiModelRoutes } from './models.js';
import { openAiSpeechRoutes } from './speech.js';
import { openAiRealtimeRoutes } from './realtime.js';
import { defaultTranscriptionLanguage, openAiTranscriptionRoutes } from './transcriptions.js';

export interface OpenAiDeps {
  config: Config;
  synthesis: SynthesisService;
  voices: VoiceRegistry;
  transcribe: Transcribe;
  /** Throws PackNotInstalledError when a pack every transcription needs is missing (unset: nothing to check). */
  requirePacks?(language: string): void;
  ffmpeg: FfmpegEncoder;
  report(): ModelsReport;
  catalogue(): CatalogueEntry[];
  /** GET /v1/realtime transcription sessions (registered when both are given): the engines a session holds, and the sockets' limits. */
  streamingEngines?: () => HeldEngines;
  sockets?: RealtimeSockets;
}

export function openAiRoutes(deps: OpenAiDeps): RouteRegistrar[] {
  const { config } = deps;
  const loaded = (task: 'tts-' | 'asr-') => deps.report().loaded.filter((p) => p.kind.startsWith(task));
  const models = new SpeechModels({ voices: deps.voices, settings: config.openai, ttsPacks: () => loaded('tts-').map((p) => p.id) });
  const recognizerPacks = () => loaded('asr-').map((p) => p.id);
  const recognizerLanguages = () => [...new Set(loaded('asr-').flatMap((p) => p.languages))];
  const realtime = deps.streamingEngines && deps.sockets && openAiRealtimeRoutes({
    engines: deps.streamingEngines,
    sockets: deps.sockets,
    writeStallTimeoutMs: config.http.writeStallTimeoutMs,
    partialSlots: config.transcription.workers,
    recognizerPacks,
    defaultLanguage: () => defaultTranscriptionLanguage(recognizerLanguages()),
  });
  return [
    ...(realtime ? [realtime] : []),
    openAiSpeechRoutes({ synthesis: deps.synthesis, models, ffmpeg: deps.ffmpeg, maxTextChars: config.limits.maxTextChars, writeStallTimeoutMs: config.http.writeStallTimeoutMs }),
    openAiTranscriptionRoutes({
      transcribe: deps.transcribe,
      maxUploadBytes: config.limits.maxUploadBytes,
      recognizerPacks,
      recognizerLanguages,
      ...(deps.requirePacks ? { requirePacks: deps.requirePacks } : {}),
      writeStallTimeoutMs: config.http.writeStallTimeoutMs,
    }),
    openAiModelRoutes({ models, speechModel: config.openai.speechModel, report: deps.report, catalogue: deps.catalogue }),
  ];
}
