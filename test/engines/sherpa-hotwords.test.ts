/** What sherpa needs to boost keywords: the vocabulary derived from bpe.model, and the hotwords lines and files. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { bpeVocabFromModel, bpeVocabOf, dropDeadProcessesFiles, dropHotwordsFiles, hotwordLines, hotwordsFile, processOwner, tokensAreUpperCase } from '../../src/engines/sherpa-hotwords.js';
import { resample } from '../../src/audio/resample.js';
import type { PoolTask, TaskRunner } from '../../src/engines/sherpa-tasks.js';
import { createOnlineRecognizer } from '../../src/engines/server/sherpa-online-recognizer.js';
import { createWorkerPool } from '../../src/engines/inference/worker-pool.js';
import { REAL_TEST_MODELS, needs, sharedModel } from '../helpers/models.js';
import { loadCorpusAudio, streamingEnglishEngine, streamingEnglishPack } from './stt-fixtures.js';
import type { ModelPack } from '../../src/models/model-pack.js';
import { enginePackAs } from '../../src/models/families/index.js';

const NEEDS = needs({ models: [REAL_TEST_MODELS.STREAMING_ENGLISH] });

describe('sherpa hotwords support', () => {
  it('derives bpe.vocab from bpe.model exactly as SentencePiece exports it (the shared pack carries both)', { skip: NEEDS }, () => {
    const dir = sharedModel(REAL_TEST_MODELS.STREAMING_ENGLISH);
    if (!existsSync(path.join(dir, 'bpe.vocab'))) return; // a pulled copy ships bpe.model only: derivation is all there is
    const derived = bpeVocabFromModel(readFileSync(path.join(dir, 'bpe.model')));
    assert.equal(derived, readFileSync(path.join(dir, 'bpe.vocab'), 'utf8'));
    const file = bpeVocabOf({ bpeModel: path.join(dir, 'bpe.model') })!;
    assert.equal(readFileSync(file, 'utf8'), derived, 'written to the cache for a pack without bpe.vocab');
    assert.equal(bpeVocabOf({ bpeVocab: '/pack/bpe.vocab', bpeModel: '/pack/bpe.model' }), '/pack/bpe.vocab', 'a shipped vocabulary wins');
    assert.equal(bpeVocabOf({}), undefined);
    assert.equal(tokensAreUpperCase(path.join(dir, 'tokens.txt')), true);
  });

  it('refuses a file that is not a SentencePiece model', () => {
    assert.throws(() => bpeVocabFromModel(new Uint8Array([0x08, 0x01])), /no pieces/);
    assert.throws(() => bpeVocabFromModel(new Uint8Array([0x0a, 0x80])), /truncated/);
  });

  it('writes one "PHRASE :score" line per keyword into a content-named file per owner', () => {
    const lines = hotwordLines([{ phrase: 'security code', score: 3 }, { phrase: 'Parley', score: 1.5 }], true);
    assert.deepEqual(lines, ['SECURITY CODE :3', 'PARLEY :1.5']);
    const a = hotwordsFile(lines, 'test-owner');
    assert.equal(hotwordsFile(lines, 'test-owner'), a, 'the same list is the same file');
    assert.notEqual(hotwordsFile(lines, 'other-owner'), a, 'owners never share files');
    assert.equal(readFileSync(a, 'utf8'), 'SECURITY CODE :3\nPARLEY :1.5\n');
    dropHotwordsFiles('test-owner');
    dropHotwordsFiles('other-owner');
    assert.equal(existsSync(a), false);
  });
});

/** The hotwords files this process's worker threads wrote (the fallback's), by content. */
function workerFiles(): string[] {
  const probe = hotwordsFile(['PROBE :1'], 'probe');
  const cacheDir = path.dirname(path.dirname(probe));
  dropHotwordsFiles('probe');
  return readdirSync(cacheDir)
    .filter((dir) => dir.startsWith(`hotwords-process-${process.pid}-`))
    .flatMap((dir) => readdirSync(path.join(cacheDir, dir)).map((name) => readFileSync(path.join(cacheDir, dir, name), 'utf8')));
}

/** The hotwords folders of this process's threads. */
function workerFolders(): string[] {
  const probe = hotwordsFile(['PROBE :1'], 'probe');
  dropHotwordsFiles('probe');
  return readdirSync(path.dirname(path.dirname(probe))).filter((dir) => dir.startsWith(`hotwords-process-${process.pid}-`));
}

describe('hotwords folders of processes that are gone', () => {
  it('are removed, while those of live processes stay', () => {
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    const deadFile = hotwordsFile(['GONE :1'], `process-${dead}-1`);
    const liveFile = hotwordsFile(['HERE :1'], processOwner(1));
    try {
      dropDeadProcessesFiles();
      assert.equal(existsSync(deadFile), false, 'the folder of a process that ended');
      assert.equal(existsSync(liveFile), true, "this process's own");
    } finally {
      dropHotwordsFiles(`process-${dead}-1`);
      dropHotwordsFiles(processOwner(1));
    }
  });
});

describe('a streaming recogniser with hotwords (sherpa, worker pool)', { skip: NEEDS || needs({ corpus: true }) }, () => {
  it('decodes every keyword list on one boosting model, the list given to each stream, and boosts a word the plain decode misses', async () => {
    const pool = createWorkerPool({ workers: 1 });
    const submitted: PoolTask[] = [];
    const unloaded: string[] = [];
    const runner: TaskRunner<PoolTask> = {
      submit: (task, options) => {
        submitted.push(task);
        return pool.submit(task, options);
      },
      unload: (key) => {
        unloaded.push(key);
        pool.unload(key);
      },
    };
    const recognizer = createOnlineRecognizer(runner, streamingEnglishEngine({ files: { ...streamingEnglishPack().files, bpeModel: path.join(sharedModel(REAL_TEST_MODELS.STREAMING_ENGLISH), 'bpe.model') } }));
    const boostedTasks = () => submitted.filter((t) => 'hotwords' in t && t.hotwords) as Array<Extract<PoolTask, { kind: 'online-asr' | 'online-stream' }>>;
    try {
      assert.equal(recognizer.supportsHotwords, true);
      // "Lord, but I'm glad to see you again, Phil.": the tiny model hears "LARGE" for "Lord".
      const audio = loadCorpusAudio('en/cmu-arctic-axb-a0004.wav');
      const samples = await resample(audio.samples, audio.sampleRate, 16000);
      const plain = await recognizer.recognize(samples, { language: 'en' });
      assert.doesNotMatch(plain.text, /\bLORD\b/);
      assert.equal(boostedTasks().length, 0, 'no keywords, no hotwords');
      const boosted = await recognizer.recognize(samples, { language: 'en', hotwords: [{ phrase: 'lord', score: 4 }] });
      assert.match(boosted.text, /^LORD\b/, 'the boosted decode hears the keyword');
      assert.equal(boosted.timestamps.length, boosted.tokens.length);
      await recognizer.recognize(samples, { language: 'en', hotwords: [{ phrase: 'speech', score: 2 }] });
      const [first, second] = boostedTasks();
      assert.equal(first!.hotwords, 'LORD :4', 'upper case, as the pack spells its tokens');
      assert.equal(second!.hotwords, 'SPEECH :2');
      assert.equal(first!.key, second!.key, 'a new list is the same model');
      assert.equal(first!.config.decodingMethod, 'modified_beam_search');
      assert.equal(first!.config.hotwordsFile, undefined, 'no hotwords file');
      assert.notEqual(first!.key, submitted[0]!.key, 'the plain decode keeps its own (greedy) model');
      assert.deepEqual(workerFiles(), [], 'the lists went to the streams, not through files');
      assert.equal(unloaded.length, 0);

      const stream = await recognizer.openStream!({ hotwords: [{ phrase: 'lord', score: 4 }] });
      for (let at = 0; at < samples.length; at += 3200) await stream.accept(samples.subarray(at, at + 3200));
      assert.match((await stream.finish()).text, /^LORD\b/, 'a live stream boosts its own list');
      assert.equal(boostedTasks().at(-1)!.key, first!.key);
    } finally {
      await recognizer.close();
      await pool.close();
    }
    assert.deepEqual(new Set(unloaded), new Set([submitted[0]!.key, boostedTasks()[0]!.key]), 'closing unloads both models');
  });
});

describe('a streaming recogniser with hotwords from a file (the fallback where streams cannot take them)', { skip: NEEDS || needs({ corpus: true }) }, () => {
  it('loads a model per keyword list from a hotwords file, boosts as well, and removes the files when unloaded', async () => {
    const pool = createWorkerPool({ workers: 1 });
    const pack = streamingEnglishEngine({ files: { ...streamingEnglishPack().files, bpeModel: path.join(sharedModel(REAL_TEST_MODELS.STREAMING_ENGLISH), 'bpe.model') } });
    const recognizer = createOnlineRecognizer(pool, pack, { hotwordsPerStream: false });
    try {
      const audio = loadCorpusAudio('en/cmu-arctic-axb-a0004.wav');
      const samples = await resample(audio.samples, audio.sampleRate, 16000);
      const boosted = await recognizer.recognize(samples, { language: 'en', hotwords: [{ phrase: 'lord', score: 4 }] });
      assert.match(boosted.text, /^LORD\b/);
      assert.deepEqual(workerFiles(), ['LORD :4\n'], 'the list went through a file');
      await recognizer.recognize(samples, { language: 'en', hotwords: [{ phrase: 'speech', score: 2 }] });
      await recognizer.recognize(samples, { language: 'en', hotwords: [{ phrase: 'glad', score: 2 }] });
      assert.deepEqual(workerFiles().sort(), ['GLAD :2\n', 'SPEECH :2\n'], 'at most two such models per thread; the oldest file is removed');
      await recognizer.close();
      // The unload reaches the worker before a later task does.
      await recognizer.recognize(samples, { language: 'en' });
      assert.deepEqual(workerFiles(), [], 'unloading the model removes its files');
    } finally {
      await recognizer.close();
      await pool.close();
    }
    assert.deepEqual(workerFolders(), [], 'a thread that ends removes its folder');
  });
});

describe('an offline transducer pack that can boost', { skip: NEEDS }, () => {
  it('decodes with modified beam search and its (derived) vocabulary; one that cannot keeps greedy search', () => {
    const pack = { ...streamingEnglishPack(), kind: 'asr-offline-transducer' as const };
    const buildOfflineRecognizerConfig = (p: ModelPack) => enginePackAs('offline-asr', p).config;
    const plain = buildOfflineRecognizerConfig(pack);
    assert.equal(plain.decodingMethod, 'greedy_search');
    assert.equal(plain.modelConfig.bpeVocab, undefined);
    const bpeModel = path.join(sharedModel(REAL_TEST_MODELS.STREAMING_ENGLISH), 'bpe.model');
    const boosting = buildOfflineRecognizerConfig({ ...pack, files: { ...pack.files, bpeModel } });
    assert.equal(boosting.decodingMethod, 'modified_beam_search');
    assert.equal(boosting.maxActivePaths, 4);
    assert.equal(boosting.modelConfig.modelingUnit, 'bpe');
    assert.equal(readFileSync(boosting.modelConfig.bpeVocab!, 'utf8'), bpeVocabFromModel(readFileSync(bpeModel)));
    assert.equal(buildOfflineRecognizerConfig({ ...pack, files: { ...pack.files, bpeModel }, hotwords: false }).decodingMethod, 'greedy_search', 'the family has the last word');
  });
});
