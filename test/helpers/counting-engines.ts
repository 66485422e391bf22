/** Wraps a server's TTS engines to count the sentences they are asked for and finish. */
import type { SynthesisOptions, TtsEngine, Voice } from '../../src/engines/types.js';
import type { VoiceRegistry } from '../../src/synthesis/voice-registry.js';

export interface SentenceCounter {
  started(): number;
  finished(): number;
  /** Put the original engines back. */
  restore(): void;
}

export function countSentences(registry: VoiceRegistry): SentenceCounter {
  const engines = [...registry.getEngines()];
  let started = 0;
  let finished = 0;
  const wrap = (engine: TtsEngine): TtsEngine => ({
    name: engine.name,
    normalizesText: engine.normalizesText,
    listVoices: () => engine.listVoices(),
    close: () => engine.close(),
    async *synthesize(voice: Voice, text: string, options: SynthesisOptions) {
      started++;
      yield* engine.synthesize(voice, text, options);
      finished++;
    },
  });
  registry.setEngines(engines.map(wrap));
  return { started: () => started, finished: () => finished, restore: () => registry.setEngines(engines) };
}
