/** The test loads several families share: a TTS pack says one word, an offline recogniser hears noise. */
import type { ModelPack } from '../../engines/model-pack.js';
import { buildOfflineRecognizerConfig } from '../../engines/sherpa-offline-recognizer.js';
import { loadSherpaOnnx } from '../../engines/sherpa-onnx.js';
import { buildOfflineTtsConfig } from '../../engines/sherpa-tts.js';
import { TEST_SAMPLE_RATE, testAudio, type TestLoadContext } from './family.js';

export async function ttsTestLoad(pack: ModelPack, context: TestLoadContext): Promise<Record<string, unknown>> {
  const tts = await loadSherpaOnnx().OfflineTts.createAsync(buildOfflineTtsConfig(pack, { espeakDataDir: context.espeakDataDir }));
  const text = pack.languages.includes('en') || pack.languages.length === 0 ? 'Hi.' : 'a';
  const audio = await tts.generateAsync({ text, sid: 0, speed: 1 });
  return { numSpeakers: tts.numSpeakers, sampleRate: tts.sampleRate, samples: audio.samples.length };
}

/** A zero-shot pack says one word in the voice of a second of quiet noise (what matters is that every graph runs). */
export async function zeroShotTestLoad(pack: ModelPack, context: TestLoadContext): Promise<Record<string, unknown>> {
  const tts = await loadSherpaOnnx().OfflineTts.createAsync(buildOfflineTtsConfig(pack, { espeakDataDir: context.espeakDataDir }));
  const audio = await tts.generateAsync({
    text: 'Hi.',
    sid: 0,
    speed: 1,
    generationConfig: { referenceAudio: testAudio(), referenceSampleRate: TEST_SAMPLE_RATE, referenceText: 'Hello.' },
  });
  if (audio.samples.length === 0) throw new Error('the pack produced no audio from a reference sample');
  return { numSpeakers: tts.numSpeakers, sampleRate: tts.sampleRate, samples: audio.samples.length };
}

export async function offlineAsrTestLoad(pack: ModelPack): Promise<Record<string, unknown>> {
  const sherpa = loadSherpaOnnx();
  const recognizer = new sherpa.OfflineRecognizer(buildOfflineRecognizerConfig(pack));
  const stream = recognizer.createStream();
  stream.acceptWaveform({ samples: testAudio(), sampleRate: TEST_SAMPLE_RATE });
  recognizer.decode(stream);
  return { text: recognizer.getResult(stream).text };
}

/** TTS packs that phonemise with espeak-ng need the shared data unless they bring their own or a lexicon. */
export function espeakUnlessLexicon(pack: ModelPack): boolean {
  return !pack.files.dataDir && !pack.files.lexicon;
}
