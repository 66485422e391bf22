/** The synthesis use case over the voice registry and the pronunciation dictionaries. */
import type { Config } from '../config.js';
import type { PronunciationDictCache } from '../synthesis/pronunciation-dict-cache.js';
import { SynthesisService } from '../synthesis/synthesize.js';
import type { VoiceRegistry } from '../synthesis/voice-registry.js';

export function buildSynthesis(config: Config, deps: { voices: VoiceRegistry; dictCache: PronunciationDictCache }): SynthesisService {
  const { maxPreparedTextChars, maxOutputSeconds } = config.limits;
  return new SynthesisService({ voices: deps.voices, dicts: deps.dictCache, limits: { maxPreparedTextChars, maxOutputSeconds } });
}
