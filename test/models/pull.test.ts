import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { debianEspeakDataDir } from '../../src/engines/capabilities.js';
import type { CatalogueEntry } from '../../src/models/catalogue.js';
import { findCatalogueEntry, listCatalogue, recommendedPreset } from '../../src/models/catalogue.js';
import { scanModelPacks } from '../../src/models/detect.js';
import { runModelsCommand } from '../../src/cli/models.js';
import { partialFile, pullPack } from '../../src/models/pull.js';
import { packKinds } from '../../src/models/families/index.js';
import { REAL_TEST_MODELS, modelsDirWith, needs, sharedModel } from '../helpers/models.js';
import { SHARED_PACKS } from './fixtures.js';
import { packArchive } from '../helpers/pack-archive.js';

const NEEDS_REAL = needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH] });

/** The VAD as a catalogue entry of one file at `url` (the catalogue's own takes it out of an npm tarball). */
function singleFileVad(url: string): CatalogueEntry {
  const { member: _member, memberSha256: _memberSha256, integrity: _integrity, ...entry } = findCatalogueEntry('silero-vad')!;
  return { ...entry, url, format: 'file', file: 'silero_vad.onnx', size: null, sha256: null };
}

const espeakDataDir = process.env.PARLEY_ESPEAK_DATA_DIR ?? debianEspeakDataDir;
const tmp = (prefix: string) => mkdtempSync(path.join(tmpdir(), prefix));
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A .tar.bz2 holding one folder named like the pack, as upstream archives are. */
function makeArchive(folder: string): Buffer {
  const work = tmp('parley-archive-');
  cpSync(sharedModel('fake-piper-tones-en_US-16k'), path.join(work, folder), { recursive: true });
  // Padding so the archive is big enough to be cut in the middle of a body.
  writeFileSync(path.join(work, folder, 'padding.bin'), createHash('sha512').update('x').digest().toString('hex').repeat(3000));
  execFileSync('tar', ['-cjf', path.join(work, 'a.tar.bz2'), '-C', work, folder]);
  return readFileSync(path.join(work, 'a.tar.bz2'));
}

type Mode = 'normal' | 'cut' | 'ignore-range';

interface Server {
  url: string;
  mode: Mode;
  requests: Array<{ path: string; range?: string }>;
  files: Map<string, Buffer>;
  close(): Promise<void>;
}

async function startServer(): Promise<Server> {
  const state = { mode: 'normal' as Mode, requests: [] as Server['requests'], files: new Map<string, Buffer>() };
  const server = http.createServer((req, res) => {
    const range = req.headers.range;
    state.requests.push({ path: req.url ?? '', ...(range ? { range } : {}) });
    const body = state.files.get(req.url ?? '');
    if (!body) {
      res.writeHead(404).end('not found');
      return;
    }
    const m = range ? /^bytes=(\d+)-$/.exec(range) : null;
    if (m && state.mode !== 'ignore-range') {
      const start = Number(m[1]);
      res.writeHead(206, { 'Content-Length': body.length - start, 'Content-Range': `bytes ${start}-${body.length - 1}/${body.length}` });
      res.end(body.subarray(start));
      return;
    }
    res.writeHead(200, { 'Content-Length': body.length });
    if (state.mode === 'cut') {
      res.write(body.subarray(0, Math.floor(body.length / 2)), () => setTimeout(() => res.socket?.destroy(), 20));
      return;
    }
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }) as Server;
}

function entryFor(server: Server, id: string, archive: Buffer, overrides: Partial<CatalogueEntry> = {}): CatalogueEntry {
  server.files.set(`/${id}.tar.bz2`, archive);
  return {
    id,
    kind: 'tts-vits',
    description: 'test voice',
    languages: ['en'],
    voices: [{ speakerId: 0, displayName: 'Tone', gender: 'female', accent: 'us' }],
    url: `${server.url}/${id}.tar.bz2`,
    format: 'tar.bz2',
    size: archive.length,
    sha256: sha256(archive),
    licence: 'test',
    models: ['tts-v2'],
    ...overrides,
  };
}

function sink(): { stream: Writable; text: () => string } {
  let text = '';
  return {
    stream: new Writable({
      write(chunk, _enc, done) {
        text += String(chunk);
        done();
      },
    }),
    text: () => text,
  };
}

describe('pullPack', () => {
  let server: Server;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server.close();
  });

  it('downloads with progress, unpacks atomically and records what it got', async () => {
    const modelsDir = tmp('parley-pull-');
    const archive = makeArchive('vits-piper-en_US-tone-low');
    const entry = entryFor(server, 'vits-piper-en_US-tone-low', archive);
    const progress: Array<[number, number | undefined]> = [];
    const result = await pullPack(entry, { modelsDir, onProgress: (r, t) => progress.push([r, t]) });
    assert.equal(result.dir, path.join(modelsDir, entry.id));
    assert.equal(result.sha256, entry.sha256);
    assert.equal(result.resumed, false);
    assert.ok(progress.length >= 2);
    assert.deepEqual(progress.at(-1), [archive.length, archive.length]);
    assert.ok(progress.every(([r], i) => i === 0 || r >= progress[i - 1]![0]));
    assert.ok(existsSync(path.join(result.dir, 'model.onnx')));
    const record = JSON.parse(readFileSync(path.join(result.dir, '.parley-pack.json'), 'utf8'));
    assert.equal(record.catalogueId, entry.id);
    assert.equal(record.archiveSha256, entry.sha256);
    // Nothing left behind but the pack.
    assert.deepEqual(readdirSync(modelsDir), [entry.id]);
    const { packs } = await scanModelPacks(modelsDir);
    assert.equal(packs[0]!.catalogueId, entry.id);
    assert.equal(packs[0]!.voices[0]!.displayName, 'Tone');
    await assert.rejects(pullPack(entry, { modelsDir }), /already installed/);
  });

  it("fetches a pack's separately released files into its folder (ZipVoice's vocoder)", async () => {
    const modelsDir = tmp('parley-pull-');
    const id = 'sherpa-onnx-zipvoice-fixture';
    const work = tmp('parley-archive-');
    cpSync(sharedModel('fake-zipvoice-envelope-24k'), path.join(work, id), { recursive: true, filter: (src) => !src.endsWith('vocos_24khz.onnx') });
    execFileSync('tar', ['-cjf', path.join(work, 'a.tar.bz2'), '-C', work, id]);
    const vocoder = readFileSync(path.join(sharedModel('fake-zipvoice-envelope-24k'), 'vocos_24khz.onnx'));
    server.files.set('/vocos_24khz.onnx', vocoder);
    const entry = entryFor(server, id, readFileSync(path.join(work, 'a.tar.bz2')), {
      kind: 'tts-zipvoice',
      voices: [],
      extraFiles: [{ url: `${server.url}/vocos_24khz.onnx`, file: 'vocos_24khz.onnx' }],
    });
    const result = await pullPack(entry, { modelsDir });
    assert.deepEqual(readFileSync(path.join(result.dir, 'vocos_24khz.onnx')), vocoder);
    const { packs, problems } = await scanModelPacks(modelsDir);
    assert.deepEqual(problems, []);
    assert.equal(packs[0]!.kind, 'tts-zipvoice');
    assert.equal(path.basename(packs[0]!.files.vocoder!), 'vocos_24khz.onnx');
    assert.deepEqual(readdirSync(modelsDir), [id]);
  });

  it('resumes a download cut mid-body with a Range request', async () => {
    const modelsDir = tmp('parley-pull-');
    const archive = makeArchive('vits-piper-en_US-resume-low');
    const entry = entryFor(server, 'vits-piper-en_US-resume-low', archive);
    server.mode = 'cut';
    server.requests.length = 0;
    const host = new URL(server.url).host.replace(/\./g, '\\.');
    await assert.rejects(pullPack(entry, { modelsDir }), new RegExp(`^PullError: lost the connection at byte \\d+ to ${host} \\(.*\\): .+; run the pull again to resume$`));
    const partial = partialFile(modelsDir, entry.id);
    assert.ok(existsSync(partial), 'partial kept');
    const got = readFileSync(partial).length;
    assert.ok(got > 0 && got < archive.length, `partial has ${got} of ${archive.length}`);
    assert.ok(!existsSync(path.join(modelsDir, entry.id)));

    server.mode = 'normal';
    const result = await pullPack(entry, { modelsDir });
    assert.equal(result.resumed, true);
    assert.equal(result.sha256, entry.sha256);
    assert.equal(server.requests.at(-1)!.range, `bytes=${got}-`);
    assert.ok(existsSync(path.join(modelsDir, entry.id, 'tokens.txt')));
    assert.ok(!existsSync(partial));
  });

  it('starts over when the server ignores Range and answers 200', async () => {
    const modelsDir = tmp('parley-pull-');
    const archive = makeArchive('vits-piper-en_US-norange-low');
    const entry = entryFor(server, 'vits-piper-en_US-norange-low', archive);
    mkdirSync(path.join(modelsDir, '.partial'));
    writeFileSync(partialFile(modelsDir, entry.id), archive.subarray(0, 1000));
    server.mode = 'ignore-range';
    server.requests.length = 0;
    try {
      const result = await pullPack(entry, { modelsDir });
      assert.equal(result.sha256, entry.sha256);
      assert.equal(result.resumed, false);
      assert.equal(server.requests[0]!.range, 'bytes=1000-');
    } finally {
      server.mode = 'normal';
    }
  });

  it('refuses a wrong sha256 and leaves nothing installed', async () => {
    const modelsDir = tmp('parley-pull-');
    const archive = makeArchive('vits-piper-en_US-bad-low');
    const entry = entryFor(server, 'vits-piper-en_US-bad-low', archive, { sha256: 'f'.repeat(64) });
    await assert.rejects(pullPack(entry, { modelsDir }), /sha256 .*expected f{64}/);
    assert.ok(!existsSync(path.join(modelsDir, entry.id)), 'no pack folder');
    assert.ok(!existsSync(partialFile(modelsDir, entry.id)), 'no partial');
    assert.deepEqual(readdirSync(modelsDir), []);
  });

  it('installs a single-file asset into its own folder', { skip: NEEDS_REAL }, async () => {
    const modelsDir = tmp('parley-pull-');
    const bytes = readFileSync(path.join(sharedModel('silero-vad-v5'), 'silero_vad.onnx'));
    server.files.set('/silero_vad.onnx', bytes);
    const entry = singleFileVad(`${server.url}/silero_vad.onnx`);
    await pullPack(entry, { modelsDir });
    assert.deepEqual(readdirSync(path.join(modelsDir, 'silero-vad')).sort(), ['.parley-pack.json', 'silero_vad.onnx']);
    const { packs } = await scanModelPacks(modelsDir);
    assert.equal(packs[0]!.kind, 'vad-silero');
  });

  it('names the host and the cause when the server cannot be reached', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const modelsDir = tmp('parley-pull-');
    const entry = singleFileVad(`http://127.0.0.1:${port}/silero_vad.onnx`);
    await assert.rejects(pullPack(entry, { modelsDir }), (error: Error) => {
      assert.equal(error.message, `could not reach 127.0.0.1:${port} (${entry.url}): connect ECONNREFUSED 127.0.0.1:${port}`);
      return true;
    });
    assert.ok(!existsSync(path.join(modelsDir, 'silero-vad')));
  });

  it('reports an HTTP error without leaving anything', async () => {
    const modelsDir = tmp('parley-pull-');
    const entry = singleFileVad(`${server.url}/missing.onnx`);
    await assert.rejects(pullPack(entry, { modelsDir }), /HTTP 404/);
    assert.ok(!existsSync(path.join(modelsDir, 'silero-vad')));
  });
});

describe('catalogue', () => {
  it('has well-formed entries and a recommended preset', () => {
    const entries = listCatalogue();
    const ids = new Set(entries.map((e) => e.id));
    assert.equal(ids.size, entries.length, 'unique ids');
    for (const e of entries) {
      assert.ok(packKinds().includes(e.kind), `${e.id} kind`);
      assert.ok(e.sha256 === null || /^[0-9a-f]{64}$/.test(e.sha256), `${e.id} sha256`);
      assert.ok(e.size === null || e.size > 0);
      if (e.member) {
        // One file taken out of a package on the npm registry: pinned by the registry's checksum, the archive's and the file's.
        assert.match(e.url, /^https:\/\/registry\.npmjs\.org\/(@[a-z0-9-]+\/)?[a-z0-9-]+\/-\/[a-z0-9.-]+\.tgz$/, e.id);
        assert.match(e.integrity ?? '', /^sha512-[A-Za-z0-9+/]+=*$/, `${e.id} integrity`);
        assert.match(e.memberSha256 ?? '', /^[0-9a-f]{64}$/, `${e.id} member sha256`);
        assert.ok(e.sha256 && e.size && e.file, `${e.id} pinned, with the member's file name`);
      } else {
        assert.match(e.url, /^https:\/\/github\.com\/k2-fsa\/sherpa-onnx\/releases\/download\/[a-z-]+\/[^/]+$/, e.id);
        if (e.format === 'file') assert.ok(e.file, `${e.id} file name`);
        else assert.ok(e.url.endsWith(`/${e.id}.${e.format}`), `${e.id}: archive named like the pack`);
      }
      // Zero-shot packs have no voices of their own: voice clones speak through them.
      const zeroShot = e.kind === 'tts-zipvoice' || e.kind === 'tts-pocket';
      if (e.kind.startsWith('tts-') && !zeroShot) assert.ok((e.voices ?? []).length > 0, `${e.id} voices`);
      for (const extra of e.extraFiles ?? []) {
        assert.match(extra.url, /^https:\/\/github\.com\/k2-fsa\/sherpa-onnx\/releases\/download\/[a-z-]+\/[^/]+$/, `${e.id} extra file`);
        assert.equal(path.basename(extra.file), extra.file);
      }
    }
    // Telugu is not in the list: sherpa-onnx publishes no Piper voice for it.
    for (const lang of ['en', 'hi', 'es', 'fr', 'de', 'it', 'nl', 'pl', 'ru', 'sv', 'ar', 'ml']) {
      assert.ok(entries.some((e) => e.kind === 'tts-vits' && e.languages.includes(lang)), `a Piper voice for ${lang}`);
    }
    assert.ok(entries.some((e) => e.url.includes('/speaker-recongition-models/')));
    for (const id of recommendedPreset()) assert.ok(ids.has(id), `preset id ${id}`);
  });
});

describe('runModelsCommand', () => {
  it('lists, verifies and removes packs', { skip: NEEDS_REAL }, async () => {
    const modelsDir = modelsDirWith(SHARED_PACKS);
    const dataDir = tmp('parley-data-');
    const opts = (out: Writable) => ({ modelsDir, dataDir, espeakDataDir, out, err: out });

    let s = sink();
    assert.equal(await runModelsCommand(['list'], opts(s.stream)), 0);
    assert.match(s.text(), /silero-vad-v5 {2}vad-silero .* not verified yet/);
    assert.match(s.text(), /Available/);
    assert.match(s.text(), /kokoro-multi-lang-v1_0 {2}tts-kokoro/);

    s = sink();
    assert.equal(await runModelsCommand(['verify'], opts(s.stream)), 0, s.text());
    assert.match(s.text(), /ok {4}fake-piper-tones-en_US-16k \(tts-vits\)/);
    assert.match(s.text(), /6 usable, 0 skipped/);

    s = sink();
    await runModelsCommand(['list'], opts(s.stream));
    assert.match(s.text(), /fake-piper-tones-en_US-22k-2spk {2}tts-vits {2}\[en\] {2}[\d.]+ kB {2}usable/);

    mkdirSync(path.join(modelsDir, 'junk'));
    s = sink();
    assert.equal(await runModelsCommand(['verify'], opts(s.stream)), 1);
    assert.match(s.text(), /SKIP {2}junk: not a pack/);

    s = sink();
    assert.equal(await runModelsCommand(['rm', 'silero-vad-v5'], opts(s.stream)), 0);
    assert.match(s.text(), /removed \(link only\)/);
    assert.ok(!existsSync(path.join(modelsDir, 'silero-vad-v5')));
    assert.ok(existsSync(sharedModel('silero-vad-v5')), 'the linked folder itself is kept');
    s = sink();
    assert.equal(await runModelsCommand(['rm', 'silero-vad-v5'], opts(s.stream)), 1);
    assert.equal(await runModelsCommand(['rm', '../etc'], opts(s.stream)), 2);

    s = sink();
    assert.equal(await runModelsCommand(['--help'], opts(s.stream)), 0);
    assert.match(s.text(), /pull --recommended/);
  });

  it('pulls a catalogue pack through fetchImpl and verifies it', { skip: NEEDS_REAL }, async () => {
    const modelsDir = tmp('parley-models-');
    const dataDir = tmp('parley-data-');
    // The tiny recogniser, as its upstream release archive (the catalogue pins no checksum for it).
    const id = 'sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01';
    const archive = packArchive(id, REAL_TEST_MODELS.STREAMING_ENGLISH);
    const seen: string[] = [];
    const fetchImpl = (async (url: string | URL | Request) => {
      seen.push(String(url));
      return new Response(new Uint8Array(archive), { status: 200, headers: { 'Content-Length': String(archive.length) } });
    }) as typeof fetch;
    const out = sink();
    const err = sink();
    const code = await runModelsCommand(['pull', id], { modelsDir, dataDir, espeakDataDir, out: out.stream, err: err.stream, fetchImpl });
    assert.equal(code, 0, out.text() + err.text());
    assert.deepEqual(seen, [findCatalogueEntry(id)!.url]);
    assert.match(err.text(), new RegExp(`${id}: 100%`));
    assert.match(out.text(), new RegExp(`${id}: installed`));
    assert.match(out.text(), new RegExp(`${id}: usable`));
    assert.ok(lstatSync(path.join(modelsDir, id)).isDirectory());

    const again = sink();
    assert.equal(await runModelsCommand(['pull', id], { modelsDir, dataDir, espeakDataDir, out: again.stream, err: again.stream, fetchImpl }), 0);
    assert.match(again.text(), /already installed/);
    assert.equal(await runModelsCommand(['pull', 'no-such-pack'], { modelsDir, dataDir, espeakDataDir, out: again.stream, err: again.stream, fetchImpl }), 2);
  });
});
