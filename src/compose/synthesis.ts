/** The synthesis use case over the voice registry, the pronunciation dictionaries and the account's clones. */
import type { Config } from '../config.js';
import { voiceListRequest } from '../http/routes/voices.js';
import type { PronunciationDictCache } from '../synthesis/pronunciation-dict-cache.js';
import { OutputWorkers } from '../synthesis/output-workers.js';
import { SynthesisScheduler } from '../synthesis/scheduler.js';
import { SynthesisService, type AccountVoices, type SynthesisObserver } from '../synthesis/synthesize.js';
import type { VoiceRegistry } from '../synthesis/voice-registry.js';

export function buildSynthesis(
  config: Config,
  deps: { voices: VoiceRegistry; dictCache: PronunciationDictCache; accountVoices?: AccountVoices; observer?: SynthesisObserver },
): SynthesisService {
  const { maxPreparedTextChars, maxOutputSeconds } = config.limits;
  return new SynthesisService({
    voices: deps.voices,
    dicts: deps.dictCache,
    limits: { maxPreparedTextChars, maxOutputSeconds },
    scheduler: new SynthesisScheduler(config.synthesis.workersPerEngine),
    accountVoices: deps.accountVoices,
    observer: deps.observer,
    voiceListOf: voiceListRequest,
    output: config.synthesis.outputWorkers > 0 ? new OutputWorkers(config.synthesis.outputWorkers, config.synthesis.outputCallsInFlight) : undefined,
  });
}
