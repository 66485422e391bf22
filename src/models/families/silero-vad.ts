/** Silero VAD: one silero_vad*.onnx. */
import { defineFamily, requirePackFiles } from './family.js';

/** Silero v5 at 16 kHz takes 512-sample windows (the model README and sherpa's examples). */
const WINDOW_SIZE = 512;

export const sileroVad = defineFamily({
  id: 'silero-vad',
  name: 'Silero VAD',
  kinds: {
    'vad-silero': {
      capability: 'vad',
      // Speech above probability 0.5 (Silero's default); segments close after 0.25 s of silence,
      // shorter ones are dropped, longer speech is cut at 30 s (bounding the worker's buffer).
      engineConfig: (pack) => ({
        sileroVad: {
          model: requirePackFiles(pack, ['model']).model,
          threshold: 0.5,
          minSilenceDuration: 0.25,
          minSpeechDuration: 0.25,
          windowSize: WINDOW_SIZE,
          maxSpeechDuration: 30,
        },
        sampleRate: 16_000,
        numThreads: 1,
        provider: 'cpu',
        debug: 0,
      }),
      traits: () => ({}),
    },
  },
  detect(folder) {
    const model = folder.pickPreferred(folder.onnx.filter((n) => /silero.*vad|vad.*silero/i.test(n)), false);
    if (!model) return undefined;
    return { kind: 'vad-silero', files: { model: folder.abs(model) }, languages: [], main: folder.abs(model) };
  },
});
