/**
 * The labelled corpus clips the analysis tests and bench use, and a tiny WAV reader for them
 * (16-bit PCM or 32-bit float, any channel count, downmixed to mono), so these tests do not depend
 * on the audio decoder being written alongside.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { corpusDir } from '../helpers/models.js';

export interface LabelledClip {
  file: string;
  kind: 'age_gender' | 'emotion';
  gender: 'male' | 'female' | null;
  /** Age in years when the manifest gives a number. */
  age: number | null;
  /** The manifest's age text as given, e.g. "adult (RAVDESS actors aged 21-33; ...)". */
  ageText: string | null;
  emotion: string | null;
}

export function labelledClips(): LabelledClip[] {
  const lines = readFileSync(path.join(corpusDir, 'manifest.jsonl'), 'utf8').split('\n').filter(Boolean);
  return lines
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((e) => e.kind === 'age_gender' || e.kind === 'emotion')
    .map((e) => ({
      file: path.join(corpusDir, e.file as string),
      kind: e.kind as LabelledClip['kind'],
      gender: (e.gender as LabelledClip['gender']) ?? null,
      age: e.age != null && /^\d+$/.test(String(e.age)) ? Number(e.age) : null,
      ageText: e.age == null ? null : String(e.age),
      emotion: (e.emotion as string | null) ?? null,
    }));
}

export function readWav(file: string): { samples: Float32Array; sampleRate: number } {
  const buf = readFileSync(file);
  if (buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') throw new Error(`${file} is not a WAV file`);
  let format = 0;
  let channels = 0;
  let sampleRate = 0;
  let bits = 0;
  let offset = 12;
  while (offset + 8 <= buf.length) {
    const id = buf.toString('ascii', offset, offset + 4);
    const size = buf.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      format = buf.readUInt16LE(body);
      channels = buf.readUInt16LE(body + 2);
      sampleRate = buf.readUInt32LE(body + 4);
      bits = buf.readUInt16LE(body + 14);
      if (format === 0xfffe) format = buf.readUInt16LE(body + 24); // WAVE_FORMAT_EXTENSIBLE sub-format
    } else if (id === 'data') {
      const bytesPerSample = bits / 8;
      const frames = Math.floor(Math.min(size, buf.length - body) / (bytesPerSample * channels));
      const samples = new Float32Array(frames);
      for (let i = 0; i < frames; i++) {
        let sum = 0;
        for (let c = 0; c < channels; c++) {
          const at = body + (i * channels + c) * bytesPerSample;
          if (format === 1 && bits === 16) sum += buf.readInt16LE(at) / 32768;
          else if (format === 3 && bits === 32) sum += buf.readFloatLE(at);
          else throw new Error(`${file}: unsupported WAV encoding (format ${format}, ${bits} bits)`);
        }
        samples[i] = sum / channels;
      }
      return { samples, sampleRate };
    }
    offset = body + size + (size % 2);
  }
  throw new Error(`${file} has no data chunk`);
}
