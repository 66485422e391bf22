import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createAudioTagger } from '../../../src/engines/server/audio-tagging.js';
import { WorkerPool } from '../../../src/engines/inference/worker-pool.js';
import { ModelPackError } from '../../../src/errors.js';
import type { ModelPack } from '../../../src/models/model-pack.js';
import { enginePackAs } from '../../../src/models/families/index.js';

const pack = (files: Record<string, string>): ModelPack => ({
  id: 'sherpa-onnx-ced-tiny-audio-tagging-2024-04-19',
  dir: '/nonexistent',
  kind: 'audio-tagging',
  files,
  languages: [],
  voices: [],
  metadata: {},
});

describe('audio tagging engine', () => {
  it('refuses a pack with missing files before any process or sherpa sees it', () => {
    const runner = { submit: () => Promise.reject(new Error('not reached')) };
    assert.throws(
      () => createAudioTagger(runner, enginePackAs('tagging', pack({ model: '/nonexistent/model.onnx', labels: '/nonexistent/class_labels_indices.csv' }))),
      (error: unknown) => error instanceof ModelPackError && /does not exist/.test(error.message),
    );
    assert.throws(() => createAudioTagger(runner, enginePackAs('tagging', pack({ model: '/nonexistent/model.onnx' }))), ModelPackError);
  });

  it('answers a tagging task whose files vanished with ModelPackError from the worker thread, not a crash', async () => {
    const pool = new WorkerPool({ workers: 1 });
    try {
      await assert.rejects(
        pool.submit({
          kind: 'tagging',
          key: 'gone',
          config: { model: { ced: '/nonexistent/model.onnx', numThreads: 1, debug: 0 }, labels: '/nonexistent/labels.csv', topK: 3 },
          samples: new Float32Array(16000),
          sampleRate: 16000,
        }),
        (error: unknown) => error instanceof ModelPackError && /missing files/.test(error.message),
      );
    } finally {
      await pool.close();
    }
  });
});
