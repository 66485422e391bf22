/**
 * Model packs and corpus entries shared by the speech-to-text tests. Packs are described by hand
 * (pack detection is tested elsewhere); the files are the real shared models.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseWav } from '../../src/audio/wav.js';
import type { PcmAudio } from '../../src/audio/pcm.js';
import type { EnginePack } from '../../src/engines/capabilities.js';
import type { ModelPack } from '../../src/models/model-pack.js';
import { enginePackAs, type PackKind } from '../../src/models/families/index.js';
import { corpusDir, corpusFile, REAL_TEST_MODELS, sharedModel } from '../helpers/models.js';

function pack(id: string, kind: PackKind, files: Record<string, string>, languages: string[] = []): ModelPack {
  const dir = sharedModel(id);
  return {
    id,
    dir,
    kind,
    files: Object.fromEntries(Object.entries(files).map(([role, name]) => [role, path.join(dir, name)])),
    languages,
    voices: [],
    metadata: {},
  };
}

export const sileroPack = (): ModelPack => pack(REAL_TEST_MODELS.VAD, 'vad-silero', { model: 'silero_vad.onnx' });

/**
 * The shared copy is the -mobile release with its encoder patched (see its README); a copy
 * `parley models pull` installed is the full release, whose fp32 files run as they are.
 */
export const streamingEnglishPack = (): ModelPack => {
  const id = REAL_TEST_MODELS.STREAMING_ENGLISH;
  const first = (...names: string[]) => names.find((name) => existsSync(path.join(sharedModel(id), name))) ?? names[0]!;
  const stem = 'epoch-12-avg-2-chunk-16-left-64';
  return pack(
    id,
    'asr-online-transducer',
    {
      encoder: first(`encoder-${stem}.int8.patched.onnx`, `encoder-${stem}.onnx`),
      decoder: first(`decoder-${stem}.onnx`),
      joiner: first(`joiner-${stem}.int8.onnx`, `joiner-${stem}.onnx`),
      tokens: 'tokens.txt',
    },
    ['en'],
  );
};

/** Not pretrained: marks energy above about -40 dBFS as one local speaker (see its README). */
export const segmentationPack = (): ModelPack =>
  pack('fake-pyannote-segmentation-energy', 'diarization-segmentation', { model: 'model.onnx' });

/** Not pretrained: fbank mean/std statistics with the wespeaker interface (see its README). */
export const embeddingPack = (): ModelPack =>
  pack('handmade-fbank-stats-speaker-embedding', 'speaker-embedding', { model: 'model.onnx' });

/** The packs above as their engines take them (the configs their families build). */
export const sileroEngine = (): EnginePack<'vad'> => enginePackAs('vad', sileroPack());
export const streamingEnglishEngine = (overrides: Partial<ModelPack> = {}): EnginePack<'online-asr'> =>
  enginePackAs('online-asr', { ...streamingEnglishPack(), ...overrides });
export const segmentationEngine = (): EnginePack<'segmentation'> => enginePackAs('segmentation', segmentationPack());
export const embeddingEngine = (): EnginePack<'embedding'> => enginePackAs('embedding', embeddingPack());

export interface CorpusEntry {
  file: string;
  kind: string;
  language: string;
  text: string | null;
  rttm: string | null;
  duration_s: number;
  sample_rate: number;
  words?: Array<{ word: string; start: number; end: number }>;
}

export function corpusEntries(): CorpusEntry[] {
  return readFileSync(path.join(corpusDir, 'manifest.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as CorpusEntry);
}

/** English read speech with a reference transcript (corpus folder en/). */
export function englishEntries(): CorpusEntry[] {
  return corpusEntries().filter((e) => e.kind === 'transcript' && e.language === 'en' && e.file.startsWith('en/'));
}

export function loadCorpusAudio(file: string): PcmAudio {
  return parseWav(readFileSync(corpusFile(file)));
}

/** RTTM turns of a corpus file: [start, end, speaker name]. */
export function rttmTurns(file: string): Array<{ start: number; end: number; speaker: string }> {
  return readFileSync(corpusFile(file), 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('SPEAKER'))
    .map((line) => {
      const f = line.trim().split(/\s+/);
      const start = Number(f[3]);
      return { start, end: start + Number(f[4]), speaker: f[7]! };
    });
}
