/**
 * What sherpa-onnx needs to boost words (its "hotwords"): the pack's BPE vocabulary, to split each
 * phrase into the model's tokens, and the phrases themselves.
 * - A pack that ships only `bpe.model` (SentencePiece) gets its `bpe.vocab` derived here: one line
 *   per piece, "<piece>\t<score>", in id order — the form sherpa's `bpeVocab` reads. Packs may sit
 *   in read-only folders, so the derived file goes to a cache folder, named by the model's hash.
 * - Where a streaming recogniser cannot take hotwords per stream, it reads them from a file named
 *   in its config; those files are named by their content, one folder per owner.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Hotword } from './types.js';

const CACHE_DIR = path.join(tmpdir(), `parley-sherpa-hotwords-${process.getuid?.() ?? 'user'}`);

/** Reads a protobuf varint at `at`; returns [value, next offset]. */
function varint(bytes: Uint8Array, at: number): [number, number] {
  let value = 0;
  let shift = 0;
  for (;;) {
    if (at >= bytes.length) throw new Error('truncated varint');
    const b = bytes[at++]!;
    value += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) return [value, at];
    shift += 7;
    if (shift > 56) throw new Error('varint too long');
  }
}

/** Each field of one protobuf message: [field number, wire type, payload bytes or number]. */
function* fields(bytes: Uint8Array): Generator<[number, number, Uint8Array | number]> {
  let at = 0;
  while (at < bytes.length) {
    const [tag, next] = varint(bytes, at);
    at = next;
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    if (wire === 0) {
      const [v, after] = varint(bytes, at);
      at = after;
      yield [field, wire, v];
    } else if (wire === 1) {
      yield [field, wire, bytes.subarray(at, at + 8)];
      at += 8;
    } else if (wire === 2) {
      const [length, after] = varint(bytes, at);
      yield [field, wire, bytes.subarray(after, after + length)];
      at = after + length;
    } else if (wire === 5) {
      yield [field, wire, bytes.subarray(at, at + 4)];
      at += 4;
    } else {
      throw new Error(`unsupported protobuf wire type ${wire}`);
    }
  }
}

/**
 * The pieces of a SentencePiece model (ModelProto: field 1 = repeated SentencePiece {1: piece,
 * 2: score as float}) as bpe.vocab text.
 */
export function bpeVocabFromModel(model: Uint8Array): string {
  const lines: string[] = [];
  for (const [field, wire, payload] of fields(model)) {
    if (field !== 1 || wire !== 2) continue;
    let piece = '';
    let score = 0;
    for (const [f, w, p] of fields(payload as Uint8Array)) {
      if (f === 1 && w === 2) piece = Buffer.from(p as Uint8Array).toString('utf8');
      else if (f === 2 && w === 5) score = Buffer.from(p as Uint8Array).readFloatLE(0);
    }
    // Whole numbers as "0.0", the way SentencePiece's own export writes them.
    lines.push(`${piece}\t${Number.isInteger(score) ? score.toFixed(1) : String(score)}`);
  }
  if (lines.length === 0) throw new Error('no pieces in the SentencePiece model');
  return `${lines.join('\n')}\n`;
}

/** Writes `text` under the cache folder (in its sub-folder `scope`) as `name` unless it is there already; returns its path. */
function cached(name: string, text: string, scope = ''): string {
  const dir = path.join(CACHE_DIR, scope);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, name);
  if (!existsSync(file)) {
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, text, { mode: 0o600 });
    renameSync(temp, file);
  }
  return file;
}

/** The pack's bpe.vocab, derived from its bpe.model when it has none; undefined without either. */
export function bpeVocabOf(files: Record<string, string>): string | undefined {
  if (files.bpeVocab) return files.bpeVocab;
  if (!files.bpeModel || !existsSync(files.bpeModel)) return undefined;
  const model = readFileSync(files.bpeModel);
  const hash = createHash('sha256').update(model).digest('hex').slice(0, 32);
  return cached(`${hash}.bpe.vocab`, bpeVocabFromModel(model));
}

/** Whether a tokens.txt spells words in capitals only (GigaSpeech, LibriSpeech zipformers): hotwords must then be too. */
export function tokensAreUpperCase(tokensFile: string): boolean {
  const text = readFileSync(tokensFile, 'utf8');
  return /\p{Lu}/u.test(text) && !/\p{Ll}/u.test(text.replace(/<[^>]*>/g, ''));
}

/** One phrase per line with its score ("PARLEY :2"), the form of sherpa's hotwords file and stream lists. */
export function hotwordLines(hotwords: Hotword[], upperCase: boolean): string[] {
  return hotwords.map((h) => `${upperCase ? h.phrase.toUpperCase() : h.phrase} :${h.score}`);
}

/**
 * A hotwords file holding these lines, named by its content, in the folder of `owner` (one per
 * recogniser, so one retiring after a model reload never removes a file another still loads from);
 * remove it with dropHotwordsFile, the folder with dropHotwordsFiles.
 */
export function hotwordsFile(lines: string[], owner: string): string {
  const text = `${lines.join('\n')}\n`;
  return cached(`${createHash('sha256').update(text).digest('hex').slice(0, 32)}.hotwords.txt`, text, ownerFolder(owner));
}

function ownerFolder(owner: string): string {
  return `hotwords-${owner.replace(/[^\w-]/g, '_')}`;
}

export function dropHotwordsFile(file: string): void {
  if (file.startsWith(CACHE_DIR + path.sep)) rmSync(file, { force: true });
}

export function dropHotwordsFiles(owner: string): void {
  rmSync(path.join(CACHE_DIR, ownerFolder(owner)), { recursive: true, force: true });
}

/** An owner name for the hotwords files of one thread of this process (see dropDeadProcessesFiles). */
export function processOwner(thread: number): string {
  return `process-${process.pid}-${thread}`;
}

/**
 * Removes the folders of owners named by processOwner whose process is gone: a process killed
 * (or ended before its threads cleaned up) leaves its folder behind, and pids are not reused soon.
 */
export function dropDeadProcessesFiles(): void {
  dropProcessFolders((pid) => !processAlive(pid));
}

/** Removes the folders of this process's threads (at its exit). */
export function dropThisProcessFiles(): void {
  dropProcessFolders((pid) => pid === process.pid);
}

function dropProcessFolders(gone: (pid: number) => boolean): void {
  let names: string[];
  try {
    names = readdirSync(CACHE_DIR);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = /^hotwords-process-(\d+)-\d+$/.exec(name)?.[1];
    if (pid && gone(Number(pid))) rmSync(path.join(CACHE_DIR, name), { recursive: true, force: true });
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: alive, another user's.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
