/**
 * Where tests find model packs: PARLEY_TEST_MODELS_DIR, default ../shared/models next to the repo.
 * A missing folder fails the test with a message naming it (no silent skip).
 */
import { existsSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const sharedModelsDir = path.resolve(process.env.PARLEY_TEST_MODELS_DIR ?? path.join(repoRoot, '../shared/models'));
export const corpusDir = path.resolve(process.env.PARLEY_TEST_CORPUS_DIR ?? path.join(repoRoot, '../shared/corpus'));

export function sharedModel(name: string): string {
  const dir = path.join(sharedModelsDir, name);
  if (!existsSync(dir)) {
    throw new Error(
      `Test model pack "${name}" is missing from ${sharedModelsDir}. Set PARLEY_TEST_MODELS_DIR to a folder holding it ` +
        `(the project's shared models), or install it with \`parley models pull\` into that folder.`,
    );
  }
  return dir;
}

/** The packs of the transcription tests: silero VAD, the tiny streaming English zipformer, the stand-in diarization packs. */
export const sttTestPacks = [
  'silero-vad-v5',
  'sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01-mobile',
  'fake-pyannote-segmentation-energy',
  'handmade-fbank-stats-speaker-embedding',
];

/** A fresh models dir holding links to the named shared packs. */
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
