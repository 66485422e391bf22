/**
 * The server the fuzz suite attacks, in a process of its own so that its crashes and its memory
 * are its own: real config, the shared Silero VAD and tiny streaming zipformer (so transcription
 * cases reach the decoders and the pipeline), rate limits off. Prints one JSON line
 * {url, key, pid} when ready and stops on SIGTERM. PARLEY_FUZZ_MAX_AUDIO_SECONDS sets the cap.
 */
import { modelsDirWith } from '../helpers/models.js';
import type { Config } from '../../src/config.js';
import { startTestServer } from '../helpers/server.js';

const maxAudioSeconds = Number(process.env.PARLEY_FUZZ_MAX_AUDIO_SECONDS ?? 7200);
const server = await startTestServer({
  engines: true,
  config: {
    modelsDir: modelsDirWith(['silero-vad-v5', 'sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01-mobile']),
    logLevel: (process.env.PARLEY_FUZZ_LOG_LEVEL ?? 'error') as Config['logLevel'],
    limits: { maxAudioSeconds },
    rateLimits: { synthesis: { perMinute: 0 }, transcription: { perMinute: 0 }, management: { perMinute: 0 } },
    // Deliveries to the fuzz's dead webhook address give up at once instead of retrying for minutes.
    webhooks: { retries: 0, timeoutMs: 1_000 },
  },
});
process.stdout.write(JSON.stringify({ url: server.url, key: server.key, pid: process.pid }) + '\n');
process.on('SIGTERM', () => {
  void server.close().finally(() => process.exit(0));
});
