/**
 * OpenAI Realtime transcription delta latency beside the native streaming socket's partial
 * latency, same file, same recogniser: `node --import tsx bench/openai-realtime.ts`. Prints
 * numbers; asserts nothing.
 *
 * The server runs as its own process (`parley serve`) with HTTPS from a self-signed certificate
 * (PARLEY_TLS__CERT_FILE / PARLEY_TLS__KEY_FILE), the shared tiny streaming zipformer and silero
 * VAD. A corpus file (11 s) is sent at real-time pace in 50 ms frames of PCM16 at 24 kHz (what
 * LiveKit's OpenAI plugin sends) to:
 * - GET /v1/realtime?intent=transcription with the `openai` package's realtime client (server
 *   VAD, silence_duration_ms 500), and
 * - GET /api/v1/stt/get_text (eou_timeout_ms 500), the native socket.
 * Latency of a word: from sending the frame holding the end of that word's audio (word end times
 * from POST /v1/audio/transcriptions verbose_json on the same file, lined up with the socket's
 * final words by word-level edit distance) to receiving the first delta/partial that holds it
 * (the k-th word seen; a word still being heard counts: OpenAI's deltas are pieces of words too). The
 * native socket's own partial latency (frame holding the partial's `end` → partial) is printed too.
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { Agent } from 'undici';
import { WebSocket } from 'ws';
import { encodeInt16 } from '../src/audio/encode.js';
import { resample } from '../src/audio/resample.js';
import { parseWav } from '../src/audio/wav.js';
import { corpusFile } from '../test/helpers/models.js';
import { startServerProcess, type ServerProcess } from '../test/helpers/server-process.js';
import { makeSelfSignedCertificate } from '../test/helpers/tls.js';

const FILE = 'en/jfk-inaugural-1961.wav';
const FRAME_MS = 50;
const RATE = 24_000;
const FRAME_BYTES = (RATE / 1000) * FRAME_MS * 2;
const RUNS = 3;

interface Run {
  /** Per word: ms from sending the frame holding its end to receiving it. */
  wordMs: number[];
  /** Native only: ms from sending the frame holding a partial's end to receiving the partial. */
  partialMs: number[];
  transcript: string;
}

function stats(values: number[]): string {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return `n ${String(sorted.length).padStart(3)}  p50 ${at(0.5).toFixed(0).padStart(5)} ms  p95 ${at(0.95).toFixed(0).padStart(5)} ms  max ${(sorted.at(-1) ?? NaN).toFixed(0).padStart(5)} ms`;
}

function words(text: string): string[] {
  return text.toLowerCase().replace(/[^\p{L}\p{N}']+/gu, ' ').split(' ').filter(Boolean);
}

/** Sends the audio at real-time pace (paced by the clock); sentAt[i] is when frame i left. */
async function paced(pcm: Uint8Array, send: (frame: Uint8Array) => void, sentAt: number[]): Promise<void> {
  const t0 = performance.now();
  for (let i = 0, at = 0; at < pcm.length; i++, at += FRAME_BYTES) {
    const wait = t0 + i * FRAME_MS - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    send(pcm.subarray(at, at + FRAME_BYTES));
    sentAt.push(performance.now());
  }
}

/**
 * For each word of the rest of the REST transcript, the index of the hypothesis word aligned to it
 * (word-level edit distance): a word the socket heard differently ("YOUR" for "YOU ARE") still
 * lines up with the audio it came from.
 */
function align(reference: string[], hypothesis: string[]): Map<number, number> {
  const n = reference.length;
  const m = hypothesis.length;
  const d = Array.from({ length: n + 1 }, (_, i) => Array.from({ length: m + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= n; i++)
    for (let j = 1; j <= m; j++) d[i]![j] = Math.min(d[i - 1]![j - 1]! + (reference[i - 1] === hypothesis[j - 1] ? 0 : 1), d[i - 1]![j]! + 1, d[i]![j - 1]! + 1);
  const hypothesisOf = new Map<number, number>();
  for (let i = n, j = m; i > 0 && j > 0; ) {
    if (d[i]![j] === d[i - 1]![j - 1]! + (reference[i - 1] === hypothesis[j - 1] ? 0 : 1)) hypothesisOf.set(--i, --j);
    else if (d[i]![j] === d[i - 1]![j]! + 1) i--;
    else j--;
  }
  return hypothesisOf;
}

/** When each word (by position) first appears in a growing text; latencies once the final text is known. */
class WordClock {
  private readonly appearedAt: number[] = [];
  constructor(
    private readonly restWords: { word: string; end: number }[],
    private readonly sentAt: number[],
  ) {}

  saw(text: string, now: number): void {
    const count = words(text).length;
    while (this.appearedAt.length < count) this.appearedAt.push(now);
  }

  /** Per REST word matched in the final text: from sending the frame holding its end to its first appearance. */
  latencies(finalText: string): number[] {
    const hypothesisOf = align(this.restWords.map((w) => words(w.word)[0] ?? ''), words(finalText));
    const out: number[] = [];
    for (const [r, h] of hypothesisOf) {
      const frame = Math.min(this.sentAt.length - 1, Math.ceil((this.restWords[r]!.end * 1000) / FRAME_MS) - 1);
      if (frame >= 0 && this.appearedAt[h] !== undefined) out.push(this.appearedAt[h]! - this.sentAt[frame]!);
    }
    return out;
  }
}

type RestWords = { word: string; end: number }[];

async function openAiRun(client: OpenAI, ca: Buffer, pcm: Uint8Array, ends: RestWords): Promise<Run> {
  const rt = await OpenAIRealtimeWS.create(client, { model: 'gpt-4o-transcribe', options: { ca } });
  rt.on('error', (err) => console.error('  realtime error:', err.message));
  await new Promise<void>((resolve, reject) => {
    rt.socket.once('open', () => resolve());
    rt.socket.once('error', reject);
  });
  rt.send({ type: 'session.update', session: { type: 'transcription', audio: { input: { transcription: { model: 'gpt-4o-transcribe', language: 'en' }, turn_detection: { type: 'server_vad', silence_duration_ms: 500 } } } } });
  const sentAt: number[] = [];
  const clock = new WordClock(ends, sentAt);
  const finals: string[] = [];
  let text = '';
  let turns = 0;
  rt.on('input_audio_buffer.speech_started', () => turns++);
  rt.on('conversation.item.input_audio_transcription.delta', (e) => {
    text += e.delta ?? '';
    clock.saw([...finals, text].join(' '), performance.now());
  });
  const done = new Promise<void>((resolve) => {
    rt.on('conversation.item.input_audio_transcription.completed', (e) => {
      finals.push(e.transcript);
      text = '';
      clock.saw(finals.join(' '), performance.now());
      if (finals.length === turns && sending === false) resolve();
    });
  });
  let sending = true;
  await paced(pcm, (frame) => rt.send({ type: 'input_audio_buffer.append', audio: Buffer.from(frame).toString('base64') }), sentAt);
  await paced(new Uint8Array(RATE * 2), (frame) => rt.send({ type: 'input_audio_buffer.append', audio: Buffer.from(frame).toString('base64') }), []);
  sending = false;
  if (finals.length < turns) await Promise.race([done, new Promise((r) => setTimeout(r, 10_000))]);
  rt.close();
  return { wordMs: clock.latencies(finals.join(' ')), partialMs: [], transcript: finals.join(' ') };
}

function nativeRun(server: ServerProcess, ca: Buffer, pcm: Uint8Array, ends: RestWords): Promise<Run> {
  return new Promise((resolve, reject) => {
    const url = `${server.url.replace('https:', 'wss:')}/api/v1/stt/get_text?sample_rate=${RATE}&eou_timeout_ms=500`;
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${server.key}` }, ca });
    const sentAt: number[] = [];
    const clock = new WordClock(ends, sentAt);
    const finals: string[] = [];
    const run: Run = { wordMs: [], partialMs: [], transcript: '' };
    ws.on('open', async () => {
      await paced(pcm, (frame) => ws.send(frame), sentAt);
      ws.send(JSON.stringify({ type: 'close_stream' }));
    });
    ws.on('message', (data) => {
      const now = performance.now();
      const m = JSON.parse(data.toString());
      if (m.type !== 'transcription') return;
      if (m.is_final) {
        if (m.transcript) finals.push(m.transcript);
        clock.saw(finals.join(' '), now);
        return;
      }
      clock.saw([...finals, m.transcript].join(' '), now);
      const frame = Math.min(sentAt.length - 1, Math.ceil((m.end * 1000) / FRAME_MS) - 1);
      if (sentAt[frame] !== undefined) run.partialMs.push(now - sentAt[frame]!);
    });
    ws.on('close', () => resolve({ ...run, wordMs: clock.latencies(finals.join(' ')), transcript: finals.join(' ') }));
    ws.on('error', reject);
  });
}

async function main(): Promise<void> {
  const cert = makeSelfSignedCertificate();
  const server = await startServerProcess(['silero-vad-v5', 'sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01-mobile'], {
    PARLEY_TLS__CERT_FILE: cert.certFile,
    PARLEY_TLS__KEY_FILE: cert.keyFile,
  }, { tls: { ca: cert.ca } });
  try {
    const wavBytes = readFileSync(corpusFile(FILE));
    const wav = parseWav(wavBytes);
    const pcm = encodeInt16(await resample(wav.samples, wav.sampleRate, RATE));
    const client = new OpenAI({ apiKey: server.key, baseURL: `${server.url}/v1`, maxRetries: 0, fetchOptions: { dispatcher: new Agent({ connect: { ca: cert.ca } }) } as never });
    const verbose = await client.audio.transcriptions.create({ model: 'whisper-1', file: new File([wavBytes], 'a.wav', { type: 'audio/wav' }), response_format: 'verbose_json', timestamp_granularities: ['word'] });
    const ends = (verbose.words ?? []).map((w) => ({ word: w.word, end: w.end }));
    console.log(`${FILE} (${(pcm.length / 2 / RATE).toFixed(1)} s, ${ends.length} words) at real-time pace in ${FRAME_MS} ms frames, ${RUNS} runs each, one stream at a time; load average ${loadavg()[0]!.toFixed(2)} (the machine is shared)`);
    console.log(`REST: "${verbose.text}"`);
    const openai: Run[] = [];
    const native: Run[] = [];
    for (let i = 0; i < RUNS; i++) {
      openai.push(await openAiRun(client, cert.ca, pcm, ends));
      native.push(await nativeRun(server, cert.ca, pcm, ends));
    }
    console.log(`OpenAI realtime, word latency (delta):     ${stats(openai.flatMap((r) => r.wordMs))}`);
    console.log(`native socket, word latency (partial):     ${stats(native.flatMap((r) => r.wordMs))}`);
    console.log(`native socket, partial latency (its end):  ${stats(native.flatMap((r) => r.partialMs))}`);
    console.log(`OpenAI realtime transcript: "${openai[0]!.transcript}"`);
    console.log(`native transcript:          "${native[0]!.transcript}"`);
  } finally {
    await server.stop();
  }
}

await main();
