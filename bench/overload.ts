/**
 * Goodput under overload: `node --import tsx bench/overload.ts`.
 *
 * A real server (`parley serve` in its own process, the shared VAD and streaming English packs,
 * the built-in eSpeak NG voice, rate limits off so admission control is what refuses) is driven
 * from loopback by N clients, each in a loop, for BENCH_SECONDS per run:
 * - transcription: POST /api/v1/stt/get_text with a 16.7 s corpus recording;
 * - synthesis: POST /api/v1/tts-v2/get_speech of a paragraph (WAV; its length is read from the bytes).
 * Well-behaved clients (4) wait as Retry-After says; overloading clients (48) send again at once
 * after a 503 or a closed connection. Goodput is audio seconds of successful answers per wall
 * second, counted over the run after a ramp (BENCH_RAMP_SECONDS) that fills the server's queue;
 * requests still running at the end are cancelled. The clients run in this process at the lowest
 * CPU priority (BENCH_CLIENT_NICE, default 19) once the server has started: on a real deployment
 * they are other machines, and here their own loops would otherwise take the CPU the server's
 * goodput is measured on. The target is goodput at 48 ≥ 90% of goodput at 4, for each family. Refusals and their
 * rate are printed beside it. Loopback only; the runs stop by themselves.
 */
import { readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { corpusFile, REAL_TEST_MODELS } from '../test/helpers/models.js';
import { startServerProcess } from '../test/helpers/server-process.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
/** Each run first fills the server's queue for this long, uncounted: goodput is a steady-state rate. */
const RAMP_SECONDS = Number(process.env.BENCH_RAMP_SECONDS ?? 8);
const TARGET = 0.9;
const RECORDING = 'en/librispeech-1221-135766-0001.wav';
const TEXT =
  'The committee met on Tuesday to review the budget. After a long discussion, the members agreed to postpone the decision until next month, when the final figures would be available.';

interface Run {
  ok: number;
  refused: number;
  failed: number;
  audioSeconds: number;
  wallSeconds: number;
}

type Attempt = (signal: AbortSignal) => Promise<{ status: number; retryAfter: number; audioSeconds: number }>;

async function drive(clients: number, retryAtOnce: boolean, attempt: Attempt): Promise<Run> {
  const run: Run = { ok: 0, refused: 0, failed: 0, audioSeconds: 0, wallSeconds: SECONDS };
  const from = performance.now() + RAMP_SECONDS * 1000;
  const end = from + SECONDS * 1000;
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), end - performance.now());
  const counted = () => performance.now() >= from && performance.now() <= end;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (!stop.signal.aborted) {
        let wait = 0;
        try {
          const r = await attempt(stop.signal);
          if (!counted()) continue;
          if (r.status === 200) {
            run.ok++;
            run.audioSeconds += r.audioSeconds;
            continue;
          }
          if (r.status === 503) run.refused++;
          else run.failed++;
          wait = r.retryAfter;
        } catch {
          if (stop.signal.aborted) break;
          // The server closed the connection on a refusal before the client read the answer.
          if (counted()) run.refused++;
          wait = 1;
        }
        if (!retryAtOnce) await new Promise((r) => setTimeout(r, wait * 1000));
      }
    }),
  );
  clearTimeout(timer);
  // Let the server finish cancelling before the next run.
  await new Promise((r) => setTimeout(r, 2_000));
  return run;
}

const server = await startServerProcess([REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH]);
const clientNice = Number(process.env.BENCH_CLIENT_NICE ?? 19);
try {
  // After the spawn: the server and its inference processes keep their priority.
  setPriority(clientNice);
  const auth = { authorization: `Bearer ${server.key}` };
  const wav = readFileSync(corpusFile(RECORDING));
  const recordingSeconds = (wav.length - 44) / 2 / 16_000;
  const transcribe: Attempt = async (signal) => {
    const res = await fetch(`${server.url}/api/v1/stt/get_text`, { method: 'POST', headers: { ...auth, 'content-type': 'audio/wav' }, body: wav, signal });
    await res.arrayBuffer();
    return { status: res.status, retryAfter: Number(res.headers.get('retry-after') ?? 1), audioSeconds: recordingSeconds };
  };
  const synthesise: Attempt = async (signal) => {
    const res = await fetch(`${server.url}/api/v1/tts-v2/get_speech`, {
      method: 'POST',
      signal,
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ text: TEXT, voice_id: 'espeak-en-us-female', add_wav_header: false }),
    });
    const bytes = (await res.arrayBuffer()).byteLength;
    const sampleRate = Number(res.headers.get('x-sample-rate') ?? 24_000);
    return { status: res.status, retryAfter: Number(res.headers.get('retry-after') ?? 1), audioSeconds: bytes / 2 / sampleRate };
  };

  // Warm-up: models loaded, caches filled.
  await transcribe(new AbortController().signal);
  await synthesise(new AbortController().signal);

  const line = (name: string, r: Run) =>
    `${name.padEnd(34)} goodput ${(r.audioSeconds / r.wallSeconds).toFixed(1).padStart(6)} audio s/s   ok ${String(r.ok).padStart(5)}   503 ${String(r.refused).padStart(7)} (${(r.refused / r.wallSeconds).toFixed(0)}/s)   other ${r.failed}`;
  console.log(`overload bench: ${SECONDS} s counted per run after ${RAMP_SECONDS} s of ramp, loopback, clients at nice ${clientNice}`);
  for (const [family, attempt] of [
    ['transcription', transcribe],
    ['synthesis', synthesise],
  ] as const) {
    const calm = await drive(4, false, attempt);
    console.log(line(`${family}: 4 well-behaved clients`, calm));
    const storm = await drive(48, true, attempt);
    console.log(line(`${family}: 48 clients retrying at once`, storm));
    const ratio = storm.audioSeconds / calm.audioSeconds;
    console.log(`${family}: goodput at 48 / at 4 = ${(ratio * 100).toFixed(0)}% (target ≥ ${TARGET * 100}%: ${ratio >= TARGET ? 'met' : 'NOT met'})\n`);
  }
} finally {
  await server.stop();
}
