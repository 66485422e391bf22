/** Silero VAD: one silero_vad*.onnx. */
import { loadSherpaOnnx } from '../../engines/sherpa-onnx.js';
import { buildSherpaVadConfig } from '../../engines/sherpa-vad.js';
import { testAudio, type ModelFamily } from './family.js';

export const sileroVad: ModelFamily = {
  name: 'Silero VAD',
  kinds: ['vad-silero'],
  detect(folder) {
    const model = folder.pickPreferred(folder.onnx.filter((n) => /silero.*vad|vad.*silero/i.test(n)), false);
    if (!model) return undefined;
    return { kind: 'vad-silero', files: { model: folder.abs(model) }, languages: [], main: folder.abs(model) };
  },
  async testLoad(pack) {
    const vad = new (loadSherpaOnnx().Vad)(buildSherpaVadConfig(pack), 30);
    const audio = testAudio();
    for (let i = 0; i + 512 <= audio.length; i += 512) vad.acceptWaveform(audio.subarray(i, i + 512));
    vad.flush();
    return { segments: vad.isEmpty() ? 0 : 1 };
  },
};
