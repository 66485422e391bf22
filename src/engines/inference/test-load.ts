/**
 * Child-process entry of pack verification: loads one model from the engine config the pack's
 * family built (the very config the server would load), runs a tiny inference, prints one
 * result line and exits 0. sherpa-onnx ends the process on a malformed model instead of throwing,
 * which is why this runs in a child: the parent sees the exit code or signal and the server never
 * dies of a bad pack. It knows capabilities only: the config arrives built.
 *
 * argv[2]: JSON TestLoadJob. Output: a line `PARLEY-TEST-LOAD-OK <json>` (exit 0) or
 * `PARLEY-TEST-LOAD-ERROR <message>` (exit 1).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { diarizationConfig, type Capability } from '../capabilities.js';
import { loadSherpaOnnx } from '../sherpa-onnx.js';
import { ERROR_MARK, OK_MARK, type TestLoadJob } from '../test-load-protocol.js';

const SAMPLE_RATE = 16_000;

/** `seconds` of quiet noise at 16 kHz: real-looking input that exercises the whole graph. */
function testAudio(seconds = 1): Float32Array {
  const samples = new Float32Array(Math.round(SAMPLE_RATE * seconds));
  let seed = 12345;
  for (let i = 0; i < samples.length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    samples[i] = ((seed / 0x7fffffff) * 2 - 1) * 0.01;
  }
  return samples;
}

type Info = Record<string, unknown>;
type JobOf<C extends Capability> = Extract<TestLoadJob, { capability: C }>;

/** Each capability's tiny inference; the compiler checks every capability has one. */
const TEST_LOADS: { [C in Capability]: (job: JobOf<C>) => Promise<Info> } = {
  async tts({ config, languages }) {
    const tts = await loadSherpaOnnx().OfflineTts.createAsync(config);
    const text = languages.includes('en') || languages.length === 0 ? 'Hi.' : 'a';
    const audio = await tts.generateAsync({ text, sid: 0, speed: 1 });
    return { numSpeakers: tts.numSpeakers, sampleRate: tts.sampleRate, samples: audio.samples.length };
  },
  // Says one word in the voice of a second of quiet noise (what matters is that every graph runs).
  async 'zero-shot-tts'({ config }) {
    const tts = await loadSherpaOnnx().OfflineTts.createAsync(config);
    const audio = await tts.generateAsync({
      text: 'Hi.',
      sid: 0,
      speed: 1,
      generationConfig: { referenceAudio: testAudio(), referenceSampleRate: SAMPLE_RATE, referenceText: 'Hello.' },
    });
    if (audio.samples.length === 0) throw new Error('the pack produced no audio from a reference sample');
    return { numSpeakers: tts.numSpeakers, sampleRate: tts.sampleRate, samples: audio.samples.length };
  },
  async vad({ config }) {
    const vad = new (loadSherpaOnnx().Vad)(config, 30);
    const audio = testAudio();
    const window = config.sileroVad.windowSize;
    for (let i = 0; i + window <= audio.length; i += window) vad.acceptWaveform(audio.subarray(i, i + window));
    vad.flush();
    return { segments: vad.isEmpty() ? 0 : 1 };
  },
  async 'offline-asr'({ config }) {
    const recognizer = new (loadSherpaOnnx().OfflineRecognizer)(config);
    const stream = recognizer.createStream();
    stream.acceptWaveform({ samples: testAudio(), sampleRate: SAMPLE_RATE });
    recognizer.decode(stream);
    return { text: recognizer.getResult(stream).text };
  },
  async 'online-asr'({ config }) {
    const recognizer = new (loadSherpaOnnx().OnlineRecognizer)(config);
    const stream = recognizer.createStream();
    stream.acceptWaveform({ samples: testAudio(), sampleRate: SAMPLE_RATE });
    stream.inputFinished();
    while (recognizer.isReady(stream)) recognizer.decode(stream);
    return { text: recognizer.getResult(stream).text };
  },
  async 'segmentation'({ config, partner }) {
    if (!partner) throw new Error('a segmentation pack is test-loaded with an embedding pack, and none was given');
    const diarizer = new (loadSherpaOnnx().OfflineSpeakerDiarization)(diarizationConfig(config, partner));
    const turns = diarizer.process(testAudio(2));
    return { sampleRate: diarizer.sampleRate, turns: Array.isArray(turns) ? turns.length : 0 };
  },
  async 'embedding'({ config }) {
    const extractor = new (loadSherpaOnnx().SpeakerEmbeddingExtractor)(config);
    const stream = extractor.createStream();
    stream.acceptWaveform({ samples: testAudio(2), sampleRate: SAMPLE_RATE });
    stream.inputFinished();
    return { dim: extractor.dim, embedding: extractor.compute(stream).length };
  },
  async 'tagging'({ config }) {
    const tagger = new (loadSherpaOnnx().AudioTagging)({ ...config, topK: 3 });
    const stream = tagger.createStream();
    stream.acceptWaveform({ samples: testAudio(), sampleRate: SAMPLE_RATE });
    return { events: tagger.compute(stream, 3).length };
  },
  async 'offline-punctuation'({ config }) {
    return { text: new (loadSherpaOnnx().OfflinePunctuation)(config).addPunct('hello how are you i am fine thank you') };
  },
  async 'online-punctuation'({ config }) {
    return { text: new (loadSherpaOnnx().OnlinePunctuation)(config).addPunct('hello how are you i am fine thank you') };
  },
};

/** Loads the job's model and runs a tiny inference; resolves with what was learnt (speakers, rate...). */
function runTestLoad<C extends Capability>(job: JobOf<C>): Promise<Info> {
  return (TEST_LOADS[job.capability] as (job: JobOf<C>) => Promise<Info>)(job);
}

async function main(): Promise<void> {
  try {
    const job = JSON.parse(process.argv[2] ?? '') as TestLoadJob;
    const info = await runTestLoad(job);
    process.stdout.write(`\n${OK_MARK} ${JSON.stringify(info)}\n`, () => process.exit(0));
  } catch (error) {
    const message = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ');
    process.stdout.write(`\n${ERROR_MARK} ${message}\n`, () => process.exit(1));
  }
}

const entry = process.argv[1] ? path.resolve(process.argv[1]) : '';
if (entry === fileURLToPath(import.meta.url)) void main();
