/** The synthesis use case over the voice registry, the pronunciation dictionaries and the account's clones. */
import type { EncodedFormat } from '../audio/pipeline.js';
import { outputFormats } from '../audio/pcm.js';
import type { Config } from '../config.js';
import type { Voice } from '../engines/types.js';
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

/**
 * Sentences of the kinds clients send (a number, an abbreviation, a question, a long clause),
 * spoken at start. eSpeak NG is JavaScript (compiled from C by wasm2js), and V8 optimises it only
 * as it runs; each voice variant (male, female) runs code of its own. Measured on one worker after
 * the engine's own one-sentence warm-up: the first three-sentence request of the female voice
 * took 560 ms of CPU where later ones took 55–100 ms; six real sentences of the male voice first
 * left it at 420–560 ms, six of the female voice brought it to 78 ms.
 */
const WARM_UP_FIRST_SENTENCE = 'At 7:45 on Tuesday morning, the three engineers met Dr. Patel in room 204 to go over the plans.';
const WARM_UP_TEXT =
  `${WARM_UP_FIRST_SENTENCE} ` +
  'Would the new bridge, rated for forty tonnes, really open before the first snow of winter? ' +
  'Nobody could say for certain; the weather, cold, wet and unpredictable, kept changing everything.';

/**
 * Runs real syntheses of a short paragraph through the whole use case (text preparation, the
 * scheduler, the eSpeak workers, the output threads) in an English voice of each gender,
 * `workers` at once so that every eSpeak worker speaks part of each, `rounds` times over
 * (config.synthesis.warmUpRounds). Measured on a loaded machine, a server's first request cost
 * 620 ms of CPU without this and 300–420 ms with two or three rounds (a tenth: 85–180 ms): it
 * halves the gap, it does not close it. Then its first sentence (5 s of speech) is streamed once
 * in every encoded format through every output thread (as many streams at once as there are
 * threads): the encoders' own warm-up runs on a synthetic sound, and libFLAC (asm.js) met real
 * speech as new code to optimise, so the first FLAC response cost its output thread 70–80 ms of
 * CPU where later ones cost 40–50 ms. Resolves with the voices it spoke and the formats it
 * streamed; nothing without eSpeak voices.
 */
export async function warmUpSynthesis(observed: SynthesisService, voices: VoiceRegistry, workers: number, rounds: number, outputThreads = 1): Promise<string[]> {
  if (rounds === 0) return [];
  // No client asked for this audio: it stays out of the metrics.
  const service = observed.unobserved();
  const english = voices.list('tts-v2').filter((v) => v.engine === 'espeak-ng' && v.languages.includes('en'));
  const spoken = english.filter((v, i) => english.findIndex((w) => w.gender === v.gender) === i);
  const signal = new AbortController().signal;
  const prepare = (voice: Voice, text = WARM_UP_TEXT) =>
    service.prepare({
      accountId: 'warm-up',
      model: 'tts-v2',
      text,
      voiceId: voice.id,
      sampleRate: 24_000,
      speed: 1,
      language: 'auto',
      outputFormat: 'wav',
      pronunciationDicts: [],
    });
  for (const voice of spoken) {
    for (let round = 0; round < rounds; round++) {
      await Promise.all(Array.from({ length: workers }, async () => service.wholeFile(await prepare(voice), { wavHeader: true }, signal)));
    }
  }
  const formats: EncodedFormat[] = [...outputFormats, 'opus', 'flac'];
  if (spoken[0]) {
    for (const format of formats) {
      await Promise.all(
        Array.from({ length: Math.max(workers, outputThreads) }, async () => {
          for await (const bytes of service.encodedStream(await prepare(spoken[0]!, WARM_UP_FIRST_SENTENCE), signal, undefined, format)) void bytes;
        }),
      );
    }
  }
  return [...spoken.map((voice) => `synthesis ${voice.id}`), ...(spoken[0] ? formats.map((f) => `synthesis stream ${f}`) : [])];
}
