/**
 * What a pack archive may unpack to, through a real pull from a loopback HTTP server: a link out
 * of the pack, an archive that expands far beyond its size, one with too many members (however
 * many millions) and one holding a device node or FIFO are refused before anything is installed;
 * an ordinary pack with internal links installs, its modes masked and its owner the installer.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CatalogueEntry } from '../../src/models/catalogue.js';
import { runModelsCommand } from '../../src/cli/models.js';
import { checkAgainstPin, pullPack } from '../../src/models/pull.js';
import { Writable } from 'node:stream';
import { tarArchive, writeEmptyMembersTarGz, type TarMember } from '../helpers/pack-archive.js';

const tmp = (prefix: string) => mkdtempSync(path.join(tmpdir(), prefix));

/** A .tar.bz2 of folder `top` after `fill(dir)` wrote its contents. */
function archiveOf(top: string, fill: (dir: string) => void): Buffer {
  const work = tmp('parley-bomb-');
  mkdirSync(path.join(work, top));
  fill(path.join(work, top));
  execFileSync('tar', ['-cjf', path.join(work, 'a.tar.bz2'), '-C', work, top]);
  return readFileSync(path.join(work, 'a.tar.bz2'));
}

/** Every device node, FIFO, socket, setuid/setgid/sticky or world-writable entry under `dir`, as "mode path". */
function specialEntries(dir: string, under = dir): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    const st = lstatSync(p);
    const special = !(st.isFile() || st.isDirectory() || st.isSymbolicLink()) || (!st.isSymbolicLink() && (st.mode & 0o7002) !== 0);
    return [...(special ? [`${st.mode.toString(8)} ${path.relative(under, p)}`] : []), ...(st.isDirectory() ? specialEntries(p, under) : [])];
  });
}

describe('pack archive bounds', () => {
  // An archive's bytes, or the path of a file holding them (served as a stream).
  const files = new Map<string, Buffer | string>();
  let server: http.Server;
  let base: string;
  before(async () => {
    server = http.createServer((req, res) => {
      const body = files.get(req.url ?? '');
      if (!body) return void res.writeHead(404).end();
      if (typeof body === 'string') return void createReadStream(body).pipe(res.writeHead(200, { 'content-length': statSync(body).size }));
      res.writeHead(200, { 'content-length': body.length }).end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  /** A catalogue entry for `archive` (its bytes, or a file of them: then its sha256 is not pinned). */
  const entry = (id: string, archive: Buffer | string, format: 'tar.bz2' | 'tar.gz' = 'tar.bz2'): CatalogueEntry => {
    files.set(`/${id}.${format}`, archive);
    return {
      id,
      kind: 'tts-vits',
      description: 'test',
      languages: ['en'],
      url: `${base}/${id}.${format}`,
      format,
      size: typeof archive === 'string' ? statSync(archive).size : archive.length,
      sha256: typeof archive === 'string' ? null : createHash('sha256').update(archive).digest('hex'),
      licence: 'test',
      models: ['tts-v2'],
    };
  };

  const refused = async (id: string, archive: Buffer, pattern: RegExp, limits = {}) => {
    const modelsDir = tmp('parley-models-');
    await assert.rejects(pullPack(entry(id, archive), { modelsDir, limits }), pattern);
    assert.deepEqual(readdirSync(modelsDir), [], 'nothing installed, nothing left behind');
  };

  it('refuses a symlink out of the pack (absolute, or climbing above it)', async () => {
    await refused('abs-link', archiveOf('abs-link', (d) => symlinkSync('/etc/passwd', path.join(d, 'tokens.txt'))), /tokens.txt links out of the pack/);
    await refused('up-link', archiveOf('up-link', (d) => symlinkSync('../../secret', path.join(d, 'model.onnx'))), /model.onnx links out of the pack/);
  });

  it('refuses an archive that unpacks far beyond its size (20 MB of zeros in a few hundred bytes)', async () => {
    const bomb = archiveOf('bomb', (d) => writeFileSync(path.join(d, 'model.onnx'), Buffer.alloc(20 * 1024 * 1024)));
    assert.ok(bomb.length < 10_000, `${bomb.length} bytes`);
    // Any archive may unpack to the floor (64 MB by default; 1 MB here, to keep the test small), beyond it 25 times its size.
    await refused('bomb', bomb, /unpacks to more than 1048576 bytes/, { expansionFloorBytes: 1024 * 1024 });
  });

  it('refuses more files than allowed', async () => {
    const many = archiveOf('many', (d) => {
      for (let i = 0; i < 30; i++) writeFileSync(path.join(d, `f${i}`), 'x');
    });
    await refused('many', many, /holds more than 20 files/, { maxFiles: 20 });
  });

  it('refuses an archive holding a device node or a FIFO, naming the member: none is installed', async () => {
    const specials: Array<[TarMember, RegExp]> = [
      [{ path: 'devs/mem', type: 'CharacterDevice', devmaj: 1, devmin: 1, mode: 0o666 }, /devs\/mem is a character device/],
      [{ path: 'devs/disk', type: 'BlockDevice', devmaj: 7, devmin: 0, mode: 0o660 }, /devs\/disk is a block device/],
      [{ path: 'devs/pipe', type: 'FIFO', mode: 0o666 }, /devs\/pipe is a FIFO/],
    ];
    for (const [special, pattern] of specials) {
      const modelsDir = tmp('parley-models-');
      const archive = tarArchive([{ path: 'devs/', type: 'Directory', mode: 0o755 }, { path: 'devs/model.onnx', body: 'weights' }, special]);
      const outcome = await pullPack(entry('devs', archive), { modelsDir }).then(
        () => 'installed',
        (error: Error) => error.message,
      );
      // The figure: device nodes and FIFOs in the models folder after the pull (the member, with its mode, if installed).
      assert.deepEqual(specialEntries(modelsDir), [], `${special.type} ${special.path}: ${outcome}`);
      assert.match(outcome, pattern);
      assert.match(outcome, /nothing installed/);
      assert.deepEqual(readdirSync(modelsDir), [], 'nothing installed, nothing left behind');
    }
  });

  it('installs files and folders with masked modes (no setuid, setgid, sticky or world-writable bit), owned by the installer', async () => {
    const modelsDir = tmp('parley-models-');
    const archive = tarArchive([
      { path: 'modes/', type: 'Directory', mode: 0o1777 },
      { path: 'modes/model.onnx', mode: 0o4777, body: 'weights' },
      { path: 'modes/tool', mode: 0o2750, body: '#!/bin/sh\n' },
      { path: 'modes/tokens.txt', mode: 0o600, body: 'a 1\n' },
      { path: 'modes/private/', type: 'Directory', mode: 0o2700 },
      { path: 'modes/private/voices.bin', mode: 0o666, body: 'v' },
      { path: 'modes/alias.onnx', type: 'SymbolicLink', linkpath: 'model.onnx' },
      { path: 'modes/hard.onnx', type: 'Link', linkpath: 'modes/model.onnx' },
    ]);
    const result = await pullPack(entry('modes', archive), { modelsDir });
    // The figure: setuid/setgid/sticky or world-writable entries installed.
    assert.deepEqual(specialEntries(modelsDir), []);
    const modeOf = (name: string) => (lstatSync(path.join(result.dir, name)).mode & 0o7777).toString(8);
    assert.deepEqual(
      Object.fromEntries(['.', 'model.onnx', 'tool', 'tokens.txt', 'private', 'private/voices.bin'].map((n) => [n, modeOf(n)])),
      { '.': '755', 'model.onnx': '755', tool: '755', 'tokens.txt': '644', private: '755', 'private/voices.bin': '644' },
    );
    for (const name of ['model.onnx', 'private/voices.bin', 'private']) assert.equal(lstatSync(path.join(result.dir, name)).uid, process.getuid!(), `${name} owner`);
    assert.equal(readFileSync(path.join(result.dir, 'alias.onnx'), 'utf8'), 'weights');
    assert.equal(lstatSync(path.join(result.dir, 'hard.onnx')).ino, lstatSync(path.join(result.dir, 'model.onnx')).ino);
  });

  it('refuses an archive of 2 million members at the member bound, without buffering its listing', async (t) => {
    const work = tmp('parley-many-');
    const file = path.join(work, 'many.tar.gz');
    try {
      await writeEmptyMembersTarGz(file, 'many', 2_000_000);
      const modelsDir = tmp('parley-models-');
      let peakRss = process.memoryUsage().rss;
      const baseRss = peakRss;
      const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 5);
      const started = performance.now();
      try {
        await assert.rejects(pullPack(entry('many', file, 'tar.gz'), { modelsDir }), /holds more than 20000 files/);
      } finally {
        clearInterval(sampler);
      }
      const seconds = (performance.now() - started) / 1000;
      const grownMb = (Math.max(peakRss, process.memoryUsage().rss) - baseRss) / 1024 ** 2;
      // The figures: seconds from the pull's start to its refusal, and how far the process's RSS rose meanwhile.
      t.diagnostic(`${(statSync(file).size / 1024 ** 2).toFixed(1)} MB archive of 2,000,000 members: refused after ${seconds.toFixed(2)} s, RSS rose ${grownMb.toFixed(0)} MB`);
      assert.ok(grownMb < 64, `RSS rose ${grownMb.toFixed(0)} MB`);
      assert.ok(seconds < 5, `refused after ${seconds.toFixed(2)} s`);
      assert.deepEqual(readdirSync(modelsDir), []);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });

  it('installs an ordinary pack whose links stay inside it', async () => {
    const modelsDir = tmp('parley-models-');
    const archive = archiveOf('fine', (d) => {
      writeFileSync(path.join(d, 'model.onnx'), 'weights');
      symlinkSync('model.onnx', path.join(d, 'model-alias.onnx'));
    });
    const result = await pullPack(entry('fine', archive), { modelsDir });
    assert.equal(readFileSync(path.join(result.dir, 'model-alias.onnx'), 'utf8'), 'weights');
    assert.ok(existsSync(path.join(result.dir, '.parley-pack.json')));
  });

  it('installs an archive whose member names start with "./", its links inside the pack', async () => {
    const modelsDir = tmp('parley-models-');
    const archive = tarArchive([
      { path: './', type: 'Directory', mode: 0o755 },
      { path: './dotted/', type: 'Directory', mode: 0o755 },
      { path: './dotted/model.onnx', body: 'weights' },
      { path: './dotted/alias.onnx', type: 'SymbolicLink', linkpath: 'model.onnx' },
      { path: './dotted/hard.onnx', type: 'Link', linkpath: './dotted/model.onnx' },
    ]);
    const result = await pullPack(entry('dotted', archive), { modelsDir });
    assert.equal(readFileSync(path.join(result.dir, 'alias.onnx'), 'utf8'), 'weights');
    assert.equal(readFileSync(path.join(result.dir, 'hard.onnx'), 'utf8'), 'weights');
  });

  it('checkAgainstPin: a pinned asset matches or not; nothing is installed either way', async () => {
    const modelsDir = tmp('parley-models-');
    const archive = archiveOf('pinned', (d) => writeFileSync(path.join(d, 'model.onnx'), 'weights'));
    const pinned = entry('pinned', archive);
    assert.equal((await checkAgainstPin(pinned, { modelsDir })).matches, true);
    const wrong = await checkAgainstPin({ ...pinned, sha256: 'a'.repeat(64) }, { modelsDir });
    assert.equal(wrong.matches, false);
    assert.equal(wrong.sha256, pinned.sha256);
    assert.equal((await checkAgainstPin({ ...pinned, size: null, sha256: null }, { modelsDir })).matches, null);
    assert.deepEqual(readdirSync(modelsDir), []);
  });

  it('parley models pull --verify-only: a catalogue pack without a pin prints what it received and installs nothing', async () => {
    const modelsDir = tmp('parley-models-');
    const onnx = Buffer.from('not really a model');
    // The recogniser's entry has no pin (its upstream release publishes no checksum).
    const unpinned = 'sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01';
    files.set(`/${unpinned}.tar.bz2`, onnx);
    // The catalogue's upstream URL, answered by the loopback server.
    const fetchImpl = ((url: string | URL, init?: RequestInit) => fetch(`${base}/${path.posix.basename(new URL(String(url)).pathname)}`, init)) as typeof fetch;
    let out = '';
    const stream = new Writable({ write: (chunk, _e, done) => ((out += String(chunk)), done()) });
    const code = await runModelsCommand(['pull', '--verify-only', unpinned], { modelsDir, dataDir: tmp('parley-data-'), espeakDataDir: '', out: stream, err: stream, fetchImpl });
    assert.equal(code, 0, out);
    assert.match(out, new RegExp(`${unpinned}: not pinned .*received ${onnx.length} bytes, sha256 ${createHash('sha256').update(onnx).digest('hex')}`));
    assert.deepEqual(readdirSync(modelsDir), []);
  });
});
