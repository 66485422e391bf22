/** Pack archives for install tests: a fixture pack in one folder named like the catalogue pack, as upstream archives are. */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { constants as zlibConstants, createGzip, gzipSync } from 'node:zlib';
import { Header, type HeaderData } from 'tar';
import { findCatalogueEntry, type CatalogueEntry } from '../../src/models/catalogue.js';
import { sharedModel } from './models.js';

/** A .tar.bz2 of the fixture `fixture` (default the 16 kHz fake Piper voice) in a folder named `id`. */
export function packArchive(id: string, fixture = 'fake-piper-tones-en_US-16k'): Buffer {
  const work = mkdtempSync(path.join(tmpdir(), 'parley-pack-archive-'));
  try {
    cpSync(sharedModel(fixture), path.join(work, id), { recursive: true });
    execFileSync('tar', ['-cjf', path.join(work, 'pack.tar.bz2'), '-C', work, id]);
    return readFileSync(path.join(work, 'pack.tar.bz2'));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** One archive member as its tar header says it (type defaults to a file, mode to 0644, owner to 1234:1234). */
export interface TarMember extends HeaderData {
  path: string;
  body?: string;
}

const BLOCK = 512;

/** The tar bytes of `members`: each header, its body padded to a block, then the two end blocks. */
function tarBytes(members: TarMember[]): Buffer {
  const blocks: Buffer[] = [];
  for (const { body, ...data } of members) {
    const content = Buffer.from(body ?? '');
    const header = new Header({ mode: 0o644, uid: 1234, gid: 1234, mtime: new Date(0), type: 'File', ...data, size: content.length });
    const block = Buffer.alloc(BLOCK);
    header.encode(block);
    blocks.push(block, content, Buffer.alloc((BLOCK - (content.length % BLOCK)) % BLOCK));
  }
  blocks.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(blocks);
}

/**
 * An archive written header by header, so it may hold what a packer would only take from the disk
 * of a root user: device nodes, FIFOs, setuid files, foreign owners.
 */
export function tarArchive(members: TarMember[], format: 'tar.bz2' | 'tar.gz' = 'tar.bz2'): Buffer {
  const tar = tarBytes(members);
  return format === 'tar.gz' ? gzipSync(tar) : execFileSync('bzip2', ['-c'], { input: tar, maxBuffer: 1024 ** 3 });
}

/**
 * Writes a .tar.gz to `file` holding the folder `top` and `count` empty files in it, streamed in
 * batches of headers (a template header with its name's digits and checksum rewritten), so that
 * millions of members cost seconds and a few megabytes of memory.
 */
export async function writeEmptyMembersTarGz(file: string, top: string, count: number): Promise<void> {
  const digits = String(count).length;
  const template = Buffer.alloc(BLOCK);
  new Header({ path: `${top}/f${'0'.repeat(digits)}`, mode: 0o644, uid: 0, gid: 0, size: 0, mtime: new Date(0), type: 'File' }).encode(template);
  const nameAt = top.length + 2;
  // The checksum is the sum of the header's bytes with its own field (148..155) read as spaces.
  let baseSum = 0;
  for (let i = 0; i < BLOCK; i++) baseSum += i >= 148 && i < 156 ? 0x20 : template[i]!;
  baseSum -= '0'.charCodeAt(0) * digits;
  const perBatch = 2048;
  async function* batches(): AsyncGenerator<Buffer> {
    const dir = Buffer.alloc(BLOCK);
    new Header({ path: `${top}/`, mode: 0o755, uid: 0, gid: 0, size: 0, mtime: new Date(0), type: 'Directory' }).encode(dir);
    yield dir;
    for (let first = 0; first < count; first += perBatch) {
      const n = Math.min(perBatch, count - first);
      const batch = Buffer.allocUnsafe(n * BLOCK);
      for (let k = 0; k < n; k++) {
        const at = k * BLOCK;
        template.copy(batch, at);
        const name = String(first + k).padStart(digits, '0');
        let sum = baseSum;
        for (let d = 0; d < digits; d++) {
          const c = name.charCodeAt(d);
          batch[at + nameAt + d] = c;
          sum += c;
        }
        batch.write(`${sum.toString(8).padStart(6, '0')}\0 `, at + 148, 'latin1');
      }
      yield batch;
    }
    yield Buffer.alloc(2 * BLOCK);
  }
  const out = createWriteStream(file);
  await pipeline(Readable.from(batches()), createGzip({ level: zlibConstants.Z_BEST_SPEED }), out);
  if (!out.closed) await once(out, 'close');
}

/** A fetch for `packFetch` that asks `base` for the catalogue URL's file name instead of its host. */
export function fetchFrom(base: string): typeof fetch {
  return (url, init) => fetch(`${base}/${path.basename(new URL(String(url)).pathname)}`, init);
}

/**
 * An npm package tarball as the registry serves it (every file under package/, gzipped) holding the
 * real Silero VAD v5 file at package/dist/silero_vad.onnx, as @livekit/agents-plugin-silero does.
 */
export function npmVadTarball(): Buffer {
  const work = mkdtempSync(path.join(tmpdir(), 'parley-npm-tarball-'));
  try {
    mkdirSync(path.join(work, 'package/dist'), { recursive: true });
    cpSync(path.join(sharedModel('silero-vad-v5'), 'silero_vad.onnx'), path.join(work, 'package/dist/silero_vad.onnx'));
    writeFileSync(path.join(work, 'package/package.json'), '{"name":"@livekit/agents-plugin-silero","version":"1.9.0"}\n');
    execFileSync('tar', ['-czf', path.join(work, 'pkg.tgz'), '-C', work, 'package']);
    return readFileSync(path.join(work, 'pkg.tgz'));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The catalogue's silero-vad entry with the size and checksums of `tarball` (its member's pin is kept: the file is the real one). */
export function vadEntryFor(tarball: Buffer): CatalogueEntry {
  const entry = findCatalogueEntry('silero-vad');
  if (!entry) throw new Error('the catalogue has no silero-vad entry');
  return {
    ...entry,
    size: tarball.length,
    sha256: createHash('sha256').update(tarball).digest('hex'),
    integrity: `sha512-${createHash('sha512').update(tarball).digest('base64')}`,
  };
}
