/**
 * Child-process entry of `verifyPacks`: loads one model pack the way the server would (the sherpa
 * config comes from the engine adapters' build*Config functions), runs a tiny inference, prints
 * one result line and exits 0. sherpa-onnx ends the process on a malformed model instead of
 * throwing, which is why this runs in a child: the parent sees the exit code or signal and the
 * server never dies of a bad pack.
 *
 * argv[2]: JSON TestLoadJob. Output: a line `PARLEY-TEST-LOAD-OK <json>` (exit 0) or
 * `PARLEY-TEST-LOAD-ERROR <message>` (exit 1).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ModelPack } from './model-pack.js';
import { buildAudioTaggingConfig } from './audio-tagging.js';
import { buildDiarizationConfig } from './sherpa-diarizer.js';
import { buildOfflineRecognizerConfig } from './sherpa-offline-recognizer.js';
import { loadSherpaOnnx } from './sherpa-onnx.js';
import { buildOnlineRecognizerConfig } from './sherpa-online-recognizer.js';
import { buildOfflineTtsConfig } from './sherpa-tts.js';
import { buildSherpaVadConfig } from './sherpa-vad.js';

export interface TestLoadJob {
  pack: ModelPack;
  espeakDataDir: string;
  /** For a diarization-segmentation pack: the speaker-embedding pack it is loaded with. */
  partner?: ModelPack;
}

export const OK_MARK = 'PARLEY-TEST-LOAD-OK';
export const ERROR_MARK = 'PARLEY-TEST-LOAD-ERROR';

const SAMPLE_RATE = 16_000;

/** One second of quiet noise: real-looking input that exercises the whole graph. */
function testAudio(seconds = 1): Float32Array {
  const samples = new Float32Array(Math.round(SAMPLE_RATE * seconds));
  let seed = 12345;
  for (let i = 0; i < samples.length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    samples[i] = ((seed / 0x7fffffff) * 2 - 1) * 0.01;
  }
  return samples;
}

/** Loads the pack and runs a tiny inference; resolves with what was learnt (speakers, rate...). */
export async function runTestLoad(job: TestLoadJob): Promise<Record<string, unknown>> {
  const sherpa = loadSherpaOnnx();
  const { pack } = job;
  switch (pack.kind) {
    case 'tts-vits':
    case 'tts-kokoro':
    case 'tts-matcha':
    case 'tts-kitten': {
      const config = buildOfflineTtsConfig(pack, { espeakDataDir: job.espeakDataDir });
      const tts = await sherpa.OfflineTts.createAsync(config);
      const text = pack.languages.includes('en') || pack.languages.length === 0 ? 'Hi.' : 'a';
      const audio = await tts.generateAsync({ text, sid: 0, speed: 1 });
      return { numSpeakers: tts.numSpeakers, sampleRate: tts.sampleRate, samples: audio.samples.length };
    }
    case 'asr-online-transducer': {
      const recognizer = new sherpa.OnlineRecognizer(buildOnlineRecognizerConfig(pack));
      const stream = recognizer.createStream();
      stream.acceptWaveform({ samples: testAudio(), sampleRate: SAMPLE_RATE });
      stream.inputFinished();
      while (recognizer.isReady(stream)) recognizer.decode(stream);
      return { text: recognizer.getResult(stream).text };
    }
    case 'asr-offline-transducer':
    case 'asr-nemo-transducer':
    case 'asr-nemo-ctc':
    case 'asr-zipformer-ctc':
    case 'asr-whisper':
    case 'asr-sense-voice':
    case 'asr-moonshine':
    case 'asr-paraformer': {
      const recognizer = new sherpa.OfflineRecognizer(buildOfflineRecognizerConfig(pack));
      const stream = recognizer.createStream();
      stream.acceptWaveform({ samples: testAudio(), sampleRate: SAMPLE_RATE });
      recognizer.decode(stream);
      return { text: recognizer.getResult(stream).text };
    }
    case 'vad-silero': {
      const vad = new sherpa.Vad(buildSherpaVadConfig(pack), 30);
      const audio = testAudio();
      for (let i = 0; i + 512 <= audio.length; i += 512) vad.acceptWaveform(audio.subarray(i, i + 512));
      vad.flush();
      return { segments: vad.isEmpty() ? 0 : 1 };
    }
    case 'speaker-embedding': {
      const extractor = new sherpa.SpeakerEmbeddingExtractor({ model: pack.files.model, numThreads: 1, debug: 0, provider: 'cpu' });
      const stream = extractor.createStream();
      stream.acceptWaveform({ samples: testAudio(2), sampleRate: SAMPLE_RATE });
      stream.inputFinished();
      const embedding = extractor.compute(stream);
      return { dim: extractor.dim, embedding: embedding.length };
    }
    case 'diarization-segmentation': {
      if (!job.partner) throw new Error('a segmentation pack is test-loaded with a speaker-embedding pack, and none was given');
      const diarizer = new sherpa.OfflineSpeakerDiarization(buildDiarizationConfig(pack, job.partner));
      const turns = diarizer.process(testAudio(2));
      return { sampleRate: diarizer.sampleRate, turns: Array.isArray(turns) ? turns.length : 0 };
    }
    case 'audio-tagging': {
      const tagger = new sherpa.AudioTagging({ ...buildAudioTaggingConfig(pack), topK: 3 });
      const stream = tagger.createStream();
      stream.acceptWaveform({ samples: testAudio(), sampleRate: SAMPLE_RATE });
      const events = tagger.compute(stream, 3);
      return { events: events.length };
    }
  }
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
