import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { OnnxFormatError, parseOnnxMetadata, readOnnxMetadata, readOnnxMetadataSync } from '../../src/models/onnx-metadata.js';
import { REAL_TEST_MODELS, needs, sharedModel } from '../helpers/models.js';

const NEEDS_REAL = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH] });

describe('ONNX metadata reader', () => {
  it('reads the Piper metadata of the fixtures', async () => {
    const md = await readOnnxMetadata(path.join(sharedModel('fake-piper-tones-en_US-16k'), 'model.onnx'));
    assert.deepEqual(md, {
      model_type: 'vits',
      comment: 'piper',
      language: 'English',
      voice: 'en-us',
      has_espeak: '1',
      n_speakers: '1',
      sample_rate: '16000',
    });
    const md2 = readOnnxMetadataSync(path.join(sharedModel('fake-piper-tones-en_US-22k-2spk'), 'model.onnx'));
    assert.equal(md2.n_speakers, '2');
    assert.equal(md2.sample_rate, '22050');
  });

  it('gives {} for a valid model without metadata', { skip: NEEDS_REAL }, () => {
    assert.deepEqual(readOnnxMetadataSync(path.join(sharedModel('fake-piper-tones-en_US-16k'), 'model-no-metadata.onnx')), {});
    assert.deepEqual(readOnnxMetadataSync(path.join(sharedModel('silero-vad-v5'), 'silero_vad.onnx')), {});
  });

  it('reads the metadata of the other shared packs', { skip: NEEDS_REAL }, () => {
    const seg = readOnnxMetadataSync(path.join(sharedModel('fake-pyannote-segmentation-energy'), 'model.onnx'));
    assert.equal(seg.model_type, 'pyannote-segmentation-3.0');
    assert.equal(seg.num_classes, '7');
    const emb = readOnnxMetadataSync(path.join(sharedModel('handmade-fbank-stats-speaker-embedding'), 'model.onnx'));
    assert.equal(emb.framework, 'wespeaker');
    assert.equal(emb.output_dim, '160');
    const kws = sharedModel('sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01-mobile');
    const enc = readOnnxMetadataSync(path.join(kws, 'encoder-epoch-12-avg-2-chunk-16-left-64.int8.patched.onnx'));
    assert.equal(enc.model_type, 'zipformer2');
    assert.equal(enc.decode_chunk_len, '32');
    assert.equal(readOnnxMetadataSync(path.join(kws, 'decoder-epoch-12-avg-2-chunk-16-left-64.onnx')).context_size, '2');
  });

  it('throws on truncated copies and on files that are not ONNX', { skip: NEEDS_REAL }, () => {
    const bytes = readFileSync(path.join(sharedModel('fake-piper-tones-en_US-16k'), 'model.onnx'));
    const dir = mkdtempSync(path.join(tmpdir(), 'parley-onnx-'));
    for (const cut of [10, Math.floor(bytes.length / 2), bytes.length - 3]) {
      const file = path.join(dir, `cut-${cut}.onnx`);
      writeFileSync(file, bytes.subarray(0, cut));
      assert.throws(() => readOnnxMetadataSync(file), OnnxFormatError, `cut at ${cut}`);
    }
    // A big model truncated: the graph's length runs past the end of the file.
    const kws = readFileSync(
      path.join(sharedModel('sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01-mobile'), 'joiner-epoch-12-avg-2-chunk-16-left-64.int8.onnx'),
    );
    assert.throws(() => parseOnnxMetadata(kws.subarray(0, 100_000)), /truncated/);
    assert.throws(() => parseOnnxMetadata(Buffer.from('<!DOCTYPE html><html>Not found</html>')), OnnxFormatError);
    assert.throws(() => parseOnnxMetadata(Buffer.alloc(0)), OnnxFormatError);
    assert.throws(() => parseOnnxMetadata(Buffer.from('version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 123\n')), OnnxFormatError);
  });

  it('later metadata entries win (appended metadata is a protobuf merge)', () => {
    const bytes = readFileSync(path.join(sharedModel('fake-piper-tones-en_US-16k'), 'model.onnx'));
    const entry = (k: string, v: string) => {
      const kb = Buffer.from(k);
      const vb = Buffer.from(v);
      const inner = Buffer.concat([Buffer.from([0x0a, kb.length]), kb, Buffer.from([0x12, vb.length]), vb]);
      return Buffer.concat([Buffer.from([(14 << 3) | 2, inner.length]), inner]);
    };
    const md = parseOnnxMetadata(Buffer.concat([bytes, entry('sample_rate', '8000'), entry('extra', 'yes')]));
    assert.equal(md.sample_rate, '8000');
    assert.equal(md.extra, 'yes');
  });
});
