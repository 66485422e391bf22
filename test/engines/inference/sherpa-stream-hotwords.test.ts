/**
 * The C-bound streaming recogniser (sherpa-onnx's SherpaOnnxCreateOnlineStreamWithHotwords through
 * koffi): it binds on the installed sherpa-onnx-node, decodes real audio as sherpa-onnx-node's own
 * recogniser does, and boosts each stream's own list on one loaded model.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { resample } from '../../../src/audio/resample.js';
import { createStreamHotwordsRecognizer, streamHotwordsUnavailable, type StreamHotwordsRecognizer } from '../../../src/engines/inference/sherpa-stream-hotwords.js';
import { boostedConfig } from '../../../src/engines/server/sherpa-online-recognizer.js';
import { loadSherpaOnnx, type SherpaOnlineResult, type SherpaOnlineStream } from '../../../src/engines/sherpa-onnx.js';
import { REAL_TEST_MODELS, needs, sharedModel } from '../../helpers/models.js';
import { loadCorpusAudio, streamingEnglishEngine, streamingEnglishPack } from '../stt-fixtures.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.STREAMING_ENGLISH], corpus: true });

/** Feeds `samples` in 0.2 s pieces (decoding what is ready after each), then 0.66 s of silence, and returns the result. */
function decode(recognizer: Pick<StreamHotwordsRecognizer, 'isReady' | 'decode' | 'getResult'>, stream: SherpaOnlineStream, samples: Float32Array): SherpaOnlineResult {
  for (let at = 0; at < samples.length; at += 3200) {
    stream.acceptWaveform({ samples: samples.subarray(at, at + 3200), sampleRate: 16000 });
    while (recognizer.isReady(stream)) recognizer.decode(stream);
  }
  stream.acceptWaveform({ samples: new Float32Array(10560), sampleRate: 16000 });
  stream.inputFinished();
  while (recognizer.isReady(stream)) recognizer.decode(stream);
  return recognizer.getResult(stream);
}

describe('per-stream hotwords through sherpa-onnx C library', { skip: NEEDS }, () => {
  it('binds on the installed sherpa-onnx-node, decodes like its own beam search, and boosts only the stream given the list', async () => {
    assert.equal(streamHotwordsUnavailable(), undefined, 'koffi, the C library and the struct layout all check out');
    const config = boostedConfig(streamingEnglishEngine({ files: { ...streamingEnglishPack().files, bpeModel: path.join(sharedModel(REAL_TEST_MODELS.STREAMING_ENGLISH), 'bpe.model') } }).config);
    const recognizer = createStreamHotwordsRecognizer(config);
    // "Lord, but I'm glad to see you again, Phil.": the tiny model hears "LARGE" for "Lord".
    const audio = loadCorpusAudio('en/cmu-arctic-axb-a0004.wav');
    const samples = await resample(audio.samples, audio.sampleRate, 16000);

    const sherpa = loadSherpaOnnx();
    const reference = new sherpa.OnlineRecognizer(config);
    const expected = decode(reference, reference.createStream(), samples);
    assert.match(expected.text, /^LARGE\b/);

    // Two streams of one recogniser, decoded in turn: the list belongs to its stream only.
    const plain = recognizer.createStream('');
    const boosted = recognizer.createStream('LORD :4');
    try {
      const boostedResult = decode(recognizer, boosted, samples);
      const plainResult = decode(recognizer, plain, samples);
      assert.deepEqual(plainResult.text, expected.text, 'without hotwords: what sherpa-onnx-node decodes');
      assert.deepEqual(plainResult.tokens, expected.tokens);
      assert.match(boostedResult.text, /^LORD\b/, 'the list recovers the word the plain decode missed');
      assert.equal(boostedResult.text.replace(/^LORD\b/, ''), expected.text.replace(/^LARGE\b/, ''), 'and changes nothing else here');
      assert.equal(boostedResult.timestamps.length, boostedResult.tokens.length, 'a time per token');
    } finally {
      plain.free();
      boosted.free();
    }
    assert.throws(() => recognizer.isReady(plain), /freed/, 'a freed stream is refused, never passed to C');
    plain.free(); // twice is harmless
  });
});
