/**
 * Where tests find model packs and the labelled corpus.
 * - The hand-made fixtures (fake Piper voices, the energy segmenter, the fbank embedding) are the
 *   project's own: test/fixtures/models/.
 * - Real pretrained models come from PARLEY_TEST_MODELS_DIR, else ../shared/models next to the
 *   repo, else the cache `npm test`'s set-up fills with `parley models pull`
 *   (PARLEY_TEST_CACHE_DIR, default ~/.cache/parley-test-models).
 * - The labelled corpus comes from PARLEY_TEST_CORPUS_DIR, else ../shared/corpus.
 * A test needing what is missing skips with one line naming it (needs()); with
 * PARLEY_TEST_REQUIRE_ALL=1 (CI) the missing thing fails the test file instead.
 */
import { existsSync, mkdtempSync, symlinkSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { skipWhenMissing } from './skip.js';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const fixtureModelsDir = path.join(repoRoot, 'test/fixtures/models');
export const testModelsCacheDir = path.resolve(process.env.PARLEY_TEST_CACHE_DIR ?? path.join(homedir(), '.cache/parley-test-models'));
export const sharedModelsDir = path.resolve(
  process.env.PARLEY_TEST_MODELS_DIR ?? (existsSync(path.join(repoRoot, '../shared/models')) ? path.join(repoRoot, '../shared/models') : testModelsCacheDir),
);
export const corpusDir = path.resolve(process.env.PARLEY_TEST_CORPUS_DIR ?? path.join(repoRoot, '../shared/corpus'));

/** The real models the tests use, by the folder name they have in a shared models dir. */
export const REAL_TEST_MODELS = {
  VAD: 'silero-vad-v5',
  STREAMING_ENGLISH: 'sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01-mobile',
} as const;

/** The catalogue id `parley models pull` installs each real test model under (the set-up's cache). */
export const PULLED_AS: Record<string, string> = {
  [REAL_TEST_MODELS.VAD]: 'silero-vad',
  [REAL_TEST_MODELS.STREAMING_ENGLISH]: 'sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01',
};

function findModel(name: string): string | undefined {
  const candidates = [path.join(fixtureModelsDir, name), path.join(sharedModelsDir, name)];
  if (PULLED_AS[name]) candidates.push(path.join(testModelsCacheDir, PULLED_AS[name]!));
  return candidates.find((dir) => existsSync(dir));
}

export function sharedModel(name: string): string {
  const dir = findModel(name);
  if (!dir) throw new Error(`missing ${missingModelLine(name)}`);
  return dir;
}

/** The packs of the transcription tests: silero VAD, the tiny streaming English zipformer, the stand-in diarization packs. */
export const sttTestPacks = [
  REAL_TEST_MODELS.VAD,
  REAL_TEST_MODELS.STREAMING_ENGLISH,
  'fake-pyannote-segmentation-energy',
  'handmade-fbank-stats-speaker-embedding',
];

function missingModelLine(name: string): string {
  const pull = PULLED_AS[name] ? `, nor pulled into ${testModelsCacheDir} as ${PULLED_AS[name]}` : '';
  return `model pack "${name}" (not in ${sharedModelsDir}${pull}; PARLEY_TEST_MODELS_DIR names a folder holding it)`;
}

/** A fresh models dir holding links to the named packs. */
export function modelsDirWith(names: string[]): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'parley-models-'));
  for (const name of names) symlinkSync(sharedModel(name), path.join(dir, name), 'dir');
  return dir;
}

export function corpusFile(rel: string): string {
  const file = path.join(corpusDir, rel);
  if (!existsSync(file)) throw new Error(`Corpus file ${rel} is missing from ${corpusDir} (set PARLEY_TEST_CORPUS_DIR)`);
  return file;
}

/**
 * The `skip` option of a test or suite needing these packs and/or the labelled corpus: false when
 * all are there, else one line naming what is missing. Under PARLEY_TEST_REQUIRE_ALL=1 a missing
 * thing throws instead, failing the file, so CI never passes by skipping.
 */
export function needs(what: { models?: string[]; corpus?: boolean }): string | false {
  const lines = (what.models ?? []).filter((name) => !findModel(name)).map(missingModelLine);
  if (what.corpus && !existsSync(path.join(corpusDir, 'manifest.jsonl'))) {
    lines.push(`the labelled corpus (not in ${corpusDir}; PARLEY_TEST_CORPUS_DIR names a folder holding it)`);
  }
  return skipWhenMissing(lines.length > 0 && `needs ${lines.join(' and ')}`);
}
