/** icefall zipformer (and other k2) models: streaming and offline transducers, and CTC. */
import { loadSherpaOnnx } from '../../engines/sherpa-onnx.js';
import { buildOnlineRecognizerConfig } from '../../engines/sherpa-online-recognizer.js';
import { TEST_SAMPLE_RATE, testAudio, type ModelFamily } from './family.js';
import { languagesFromName } from './languages.js';
import { offlineAsrTestLoad } from './test-loads.js';
import { transducerFiles } from './transducer.js';

export const zipformer: ModelFamily = {
  name: 'zipformer',
  kinds: ['asr-online-transducer', 'asr-offline-transducer', 'asr-zipformer-ctc'],
  detect(folder) {
    const transducer = transducerFiles(folder);
    if (transducer && 'problem' in transducer) return transducer;
    if (transducer) {
      const { metadata, encoder } = transducer;
      const online =
        /streaming|kws|online/i.test(folder.lower) || /chunk/i.test(encoder) || 'decode_chunk_len' in metadata || /streaming/i.test(metadata.comment ?? '');
      // Icefall transducers boost hotwords (modified beam search) when their BPE vocabulary is there to spell them.
      const hotwords = Boolean(transducer.files.bpeVocab ?? transducer.files.bpeModel);
      return {
        kind: online ? 'asr-online-transducer' : 'asr-offline-transducer',
        files: transducer.files,
        languages: languagesFromName(folder.id),
        main: folder.abs(encoder),
        hotwords,
      };
    }
    if (!folder.tokens || !/zipformer.*ctc|ctc.*zipformer/i.test(folder.lower)) return undefined;
    const { model } = folder.single;
    if (!model) return undefined;
    const files = { model: folder.abs(model), tokens: folder.abs(folder.tokens), ...folder.bpeVocab };
    return { kind: 'asr-zipformer-ctc', files, languages: languagesFromName(folder.id), main: folder.abs(model) };
  },
  async testLoad(pack) {
    if (pack.kind !== 'asr-online-transducer') return offlineAsrTestLoad(pack);
    const recognizer = new (loadSherpaOnnx().OnlineRecognizer)(buildOnlineRecognizerConfig(pack));
    const stream = recognizer.createStream();
    stream.acceptWaveform({ samples: testAudio(), sampleRate: TEST_SAMPLE_RATE });
    stream.inputFinished();
    while (recognizer.isReady(stream)) recognizer.decode(stream);
    return { text: recognizer.getResult(stream).text };
  },
};
