/**
 * The memory a Parley node needs, for a container's memory request and limit:
 * `npm run bench:deployment-memory`. Prints figures; asserts nothing.
 *
 * The built `parley serve` runs as its own process with MALLOC_ARENA_MAX=2 (as the image and
 * `npm start` run it), the built-in eSpeak voices and the shared tiny recogniser with its VAD.
 * Memory is read from /proc for the server and every process it starts (inference processes,
 * ffmpeg): RSS counts shared pages in each process, PSS splits them, and a container's cgroup
 * charges each page once, so PSS summed is the figure to compare with a limit.
 *
 * 1. Idle once ready (warm-up done).
 * 2. Under load, sampled every 50 ms: rounds of 4 transcriptions at once of corpus files up to
 *    17 s, beside synthesis of a 20-sentence text as WAV, as SSE, and as OpenAI MP3, 2 of each at once.
 * 3. Idle again 2 s after the load, and each process's peak RSS (VmHWM).
 *
 * Pool sizes follow the cores the process may use (eSpeak workers, output and decode workers,
 * transcription workers), so the figures hold for that many cores: the output names them.
 *
 * Env: BENCH_ROUNDS (default 5), PARLEY_TEST_MODELS_DIR, PARLEY_TEST_CORPUS_DIR.
 */
import { readFileSync } from 'node:fs';
import { availableCores } from '../src/config.js';
import { corpusFile, REAL_TEST_MODELS } from '../test/helpers/models.js';
import { processMemoryKb, processTree } from '../test/helpers/process-tree.js';
import { startServerProcess } from '../test/helpers/server-process.js';
import { trainJourney } from './texts.js';

const ROUNDS = Math.max(1, Number.parseInt(process.env.BENCH_ROUNDS ?? '5', 10) || 5);
const STT_FILES = ['en/librispeech-1221-135766-0001.wav', 'en/jfk-inaugural-1961.wav', 'en/librispeech-1089-134686-0001.wav', 'en/cmu-arctic-aew-a0003.wav'];
const text = trainJourney.join(' ');

interface TreeMemory {
  rssMb: number;
  pssMb: number;
  processes: Array<{ pid: number; name: string; rssMb: number; pssMb: number; peakRssMb: number }>;
}

function peakRssKb(pid: number): number {
  try {
    return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

function commandOf(pid: number): string | undefined {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    return argv.map((a) => a.split('/').pop()).join(' ').slice(0, 70);
  } catch {
    return undefined; // gone meanwhile
  }
}

function treeMemory(rootPid: number): TreeMemory {
  const processes: TreeMemory['processes'] = [];
  for (const pid of processTree(rootPid)) {
    const name = commandOf(pid);
    if (name === undefined) continue;
    const kb = processMemoryKb(pid);
    processes.push({ pid, name, rssMb: kb.rss / 1024, pssMb: kb.pss / 1024, peakRssMb: peakRssKb(pid) / 1024 });
  }
  const sum = (k: 'rssMb' | 'pssMb') => processes.reduce((s, p) => s + p[k], 0);
  return { rssMb: sum('rssMb'), pssMb: sum('pssMb'), processes };
}

const mb = (v: number) => `${v.toFixed(0)} MB`;

const server = await startServerProcess([REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH], { MALLOC_ARENA_MAX: '2' }, { built: true });
const headers = { authorization: `Bearer ${server.key}` };

async function ok(path: string, init: RequestInit): Promise<number> {
  const response = await fetch(`${server.url}${path}`, { ...init, headers: { ...headers, ...(init.headers as Record<string, string>) } });
  const body = Buffer.from(await response.arrayBuffer());
  if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${body.toString().slice(0, 200)}`);
  return body.length;
}

try {
  const idle = treeMemory(server.child.pid!);
  const voices = (await (await fetch(`${server.url}/api/v1/tts-v2/get_voices`, { headers })).json()) as { voices: Array<{ voiceId: string }> };
  const voiceId = voices.voices[0]?.voiceId;
  if (!voiceId) throw new Error('the server lists no tts-v2 voice');
  const productVoices = (await (await fetch(`${server.url}/waves/v1/lightning-v3.1/get_voices`, { headers })).json()) as { voices: Array<{ voiceId: string }> };
  const productVoiceId = productVoices.voices[0]?.voiceId;
  if (!productVoiceId) throw new Error('the server lists no lightning-v3.1 voice');
  const speechBody = JSON.stringify({ text, voice_id: voiceId, sample_rate: 24000 });
  const productBody = JSON.stringify({ text, voice_id: productVoiceId, sample_rate: 24000 });
  const openAiBody = JSON.stringify({ model: 'tts-1', voice: 'alloy', input: text, response_format: 'mp3' });
  const wavs = STT_FILES.map((f) => readFileSync(corpusFile(f)));

  let peak = { rssMb: 0, pssMb: 0 };
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const m = treeMemory(server.child.pid!);
      if (m.pssMb > peak.pssMb) peak = { ...peak, pssMb: m.pssMb };
      if (m.rssMb > peak.rssMb) peak = { ...peak, rssMb: m.rssMb };
      await new Promise((r) => setTimeout(r, 50));
    }
  })();

  const started = performance.now();
  let requests = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const speech = [0, 1].flatMap(() => [
      ok('/api/v1/tts-v2/get_speech', { method: 'POST', body: speechBody, headers: { 'content-type': 'application/json' } }),
      ok('/waves/v1/lightning-v3.1/stream', { method: 'POST', body: productBody, headers: { 'content-type': 'application/json' } }),
      ok('/v1/audio/speech', { method: 'POST', body: openAiBody, headers: { 'content-type': 'application/json' } }),
    ]);
    const transcription = wavs.map((wav) => ok('/api/v1/stt/get_text?language=en', { method: 'POST', body: wav, headers: { 'content-type': 'audio/wav' } }));
    await Promise.all([...speech, ...transcription]);
    requests += speech.length + transcription.length;
  }
  const loadSeconds = (performance.now() - started) / 1000;
  sampling = false;
  await sampler;
  await new Promise((r) => setTimeout(r, 2000));
  const after = treeMemory(server.child.pid!);

  console.log(`Parley node memory: built server, MALLOC_ARENA_MAX=2, ${availableCores()} cores, built-in eSpeak voices + ${REAL_TEST_MODELS.STREAMING_ENGLISH} + ${REAL_TEST_MODELS.VAD}\n`);
  console.log(`Idle once ready       ${idle.processes.length} process(es), PSS ${mb(idle.pssMb)}, RSS ${mb(idle.rssMb)}`);
  console.log(`Peak under load       PSS ${mb(peak.pssMb)}, RSS ${mb(peak.rssMb)}   (${requests} requests in ${loadSeconds.toFixed(1)} s: ${ROUNDS} rounds of 6 syntheses of ${text.length} characters and 4 transcriptions)`);
  console.log(`Idle after the load   PSS ${mb(after.pssMb)}, RSS ${mb(after.rssMb)}   (${(after.pssMb / idle.pssMb).toFixed(2)}x idle once ready)`);
  console.log('Per process (after the load; peak = VmHWM):');
  for (const p of after.processes) console.log(`  pid ${p.pid}: PSS ${mb(p.pssMb)}, RSS ${mb(p.rssMb)}, peak RSS ${mb(p.peakRssMb)}  (${p.name})`);
  const sumOfPeaks = after.processes.reduce((s, p) => s + p.peakRssMb, 0);
  console.log(`Sum of the processes' peak RSS: ${mb(sumOfPeaks)} (an upper bound: shared pages counted in each, peaks at different times)`);
} finally {
  await server.stop();
}
