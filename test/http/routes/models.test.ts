/**
 * Model packs as a running server sees them: a corrupt pack is skipped (the server stays up and
 * serves the others), and packs added or removed while it runs take effect on reload.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, symlinkSync, truncateSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KEY_ROLES } from '../../../src/accounts/api-keys.js';
import { sharedModel } from '../../helpers/models.js';
import { fetchFrom, packArchive } from '../../helpers/pack-archive.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';

let s: TestServer;
let modelsDir: string;

async function voiceIds(): Promise<string[]> {
  const r = await s.api('/api/v1/tts-v2/get_voices');
  return ((await r.json()) as { voices: Array<{ voiceId: string }> }).voices.map((v) => v.voiceId);
}

async function speak(voice_id: string): Promise<number> {
  const r = await s.api('/api/v1/tts-v2/get_speech', { method: 'POST', json: { text: 'Is this voice here?', voice_id } });
  await r.arrayBuffer();
  return r.status;
}

before(async () => {
  modelsDir = mkdtempSync(path.join(tmpdir(), 'parley-packs-'));
  symlinkSync(sharedModel('fake-piper-tones-en_US-16k'), path.join(modelsDir, 'fake-piper-tones-en_US-16k'), 'dir');
  // A copy whose model was cut short: sherpa would end the process loading it.
  const broken = path.join(modelsDir, 'broken-piper-voice');
  cpSync(sharedModel('fake-piper-tones-en_US-16k'), broken, { recursive: true });
  rmSync(path.join(broken, 'model-no-metadata.onnx'));
  truncateSync(path.join(broken, 'model.onnx'), Math.floor(statSync(path.join(broken, 'model.onnx')).size / 2));
  s = await startTestServer({ engines: true, config: { modelsDir } });
});
after(() => s?.close());

describe('model packs in a running server', () => {
  it('GET /v1/packs tells why a pack was skipped (paths on the server) to admin keys only', async () => {
    const user = await s.server.storage.apiKeys.create({ name: 'user', role: KEY_ROLES.user });
    const asUser = await fetch(`${s.url}/v1/packs`, { headers: { authorization: `Bearer ${user.key}` } });
    assert.equal(asUser.status, 200);
    const userText = await asUser.text();
    const userBody = JSON.parse(userText) as { installed: Array<{ id: string; state: string; reason?: string }> };
    const skipped = userBody.installed.find((p) => p.id === 'broken-piper-voice');
    assert.equal(skipped?.state, 'skipped');
    assert.equal(skipped?.reason, undefined);
    assert.ok(!userText.includes(modelsDir) && !userText.includes(tmpdir()), userText);
    const asAdmin = (await (await s.api('/v1/packs')).json()) as typeof userBody;
    assert.ok(asAdmin.installed.find((p) => p.id === 'broken-piper-voice')?.reason);
  });

  it('skips a corrupt pack, reports it, and keeps serving the other voices', async () => {
    const ready = await s.api('/readyz');
    assert.equal(ready.status, 200);
    const body = await ready.json();
    const skipped = body.models.detail.skipped as Array<{ id: string; reason: string }>;
    assert.deepEqual(skipped.map((p) => p.id), ['broken-piper-voice']);
    assert.ok(skipped[0]!.reason.length > 0);

    const report = await (await s.api('/api/v1/admin/models')).json();
    assert.deepEqual(report.loaded.map((p: { id: string }) => p.id), ['fake-piper-tones-en_US-16k']);

    const ids = await voiceIds();
    assert.ok(ids.includes('fake-piper-tones-en_US-16k'));
    assert.ok(!ids.some((id) => id.startsWith('broken')));
    assert.equal(await speak('fake-piper-tones-en_US-16k'), 200);
    assert.equal(await speak('espeak-en-us-male'), 200);
  });

  it('a pack dropped in while running appears after reload, and a removed one goes', async () => {
    symlinkSync(sharedModel('fake-piper-tones-en_US-22k-2spk'), path.join(modelsDir, 'fake-piper-tones-en_US-22k-2spk'), 'dir');
    assert.ok(!(await voiceIds()).includes('fake-piper-tones-en_US-22k-2spk-1'), 'not before the reload');

    const reloaded = await s.api('/api/v1/admin/models/reload', { method: 'POST' });
    assert.equal(reloaded.status, 200);
    const report = await reloaded.json();
    assert.ok(report.loaded.some((p: { id: string }) => p.id === 'fake-piper-tones-en_US-22k-2spk'));
    assert.equal(report.voices, 3);
    const ids = await voiceIds();
    assert.ok(ids.includes('fake-piper-tones-en_US-22k-2spk-0'));
    assert.ok(ids.includes('fake-piper-tones-en_US-22k-2spk-1'));
    assert.equal(await speak('fake-piper-tones-en_US-22k-2spk-1'), 200);

    rmSync(path.join(modelsDir, 'fake-piper-tones-en_US-16k'));
    await s.api('/api/v1/admin/models/reload', { method: 'POST' }).then((r) => r.arrayBuffer());
    assert.ok(!(await voiceIds()).includes('fake-piper-tones-en_US-16k'));
    assert.equal(await speak('fake-piper-tones-en_US-16k'), 400);
  });

  it('reload needs a key', async () => {
    const r = await fetch(`${s.url}/api/v1/admin/models/reload`, { method: 'POST' });
    assert.equal(r.status, 401);
  });
});

describe('pack install, verify and remove over HTTP', () => {
  /** A catalogue pack with no size or checksum recorded: the fixture archive installs under its id. */
  const PACK = 'vits-piper-en_US-lessac-medium';
  let p: TestServer;
  let archives: http.Server;
  let packsDir: string;
  let userKey: string;

  before(async () => {
    const archive = packArchive(PACK);
    archives = http.createServer((req, res) => {
      if (req.url === `/${PACK}.tar.bz2`) res.writeHead(200, { 'content-length': archive.length }).end(archive);
      else res.writeHead(404).end('not here');
    });
    await new Promise<void>((resolve) => archives.listen(0, '127.0.0.1', resolve));
    packsDir = mkdtempSync(path.join(tmpdir(), 'parley-install-'));
    // Installed already, under a catalogue id: a second install is a conflict.
    symlinkSync(sharedModel('fake-piper-tones-en_US-16k'), path.join(packsDir, 'vits-piper-en_US-amy-low'), 'dir');
    p = await startTestServer({ engines: true, config: { modelsDir: packsDir }, packFetch: fetchFrom(`http://127.0.0.1:${(archives.address() as AddressInfo).port}`) });
    userKey = (await p.server.storage.apiKeys.create({ name: 'user' })).key;
  });
  after(async () => {
    await p?.close();
    archives?.close();
  });

  /** The events of an SSE body, parsed. */
  const events = (text: string) =>
    text
      .split('\n\n')
      .filter(Boolean)
      .map((block) => {
        const lines = block.split('\n');
        return { event: lines.find((l) => l.startsWith('event: '))!.slice(7), data: JSON.parse(lines.find((l) => l.startsWith('data: '))!.slice(6)) };
      });

  it('installs a catalogue pack, streaming its progress, and loads it', async () => {
    const r = await p.api(`/api/v1/admin/models/${PACK}/install`, { method: 'POST' });
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^text\/event-stream/);
    const got = events(await r.text());
    const progress = got.filter((e) => e.event === 'progress');
    assert.ok(progress.length >= 1);
    const total = progress.at(-1)!.data.total as number;
    assert.ok(total > 1000 && progress.at(-1)!.data.received === total, JSON.stringify(progress.at(-1)));
    assert.deepEqual(got.at(-1)!.event, 'installed');
    assert.deepEqual({ ...got.at(-1)!.data, sha256: 'x' }, { id: PACK, usable: true, bytes: total, sha256: 'x', loaded: true });
    const report = await (await p.api('/api/v1/admin/models')).json();
    assert.ok(report.loaded.some((x: { id: string }) => x.id === PACK));
  });

  it('verifies an installed pack, removes it (and reloads); both answer 404 once it is gone', async () => {
    const verified = await p.api(`/api/v1/admin/models/${PACK}/verify`, { method: 'POST' });
    assert.deepEqual(await verified.json(), { id: PACK, usable: true });
    const removed = await p.api(`/api/v1/admin/models/${PACK}`, { method: 'DELETE' });
    assert.equal(removed.status, 200);
    const body = await removed.json();
    assert.equal(body.removed, true);
    assert.ok(!body.report.loaded.some((x: { id: string }) => x.id === PACK));
    assert.equal((await p.api(`/api/v1/admin/models/${PACK}`, { method: 'DELETE' })).status, 404);
    assert.equal((await p.api(`/api/v1/admin/models/${PACK}/verify`, { method: 'POST' })).status, 404);
  });

  it('refuses with a clear 4xx before any stream: unknown, installed, bad id, a user key', async () => {
    const unknown = await p.api('/api/v1/admin/models/no-such-pack/install', { method: 'POST' });
    assert.equal(unknown.status, 404);
    assert.match((await unknown.json()).message, /not in the catalogue/);
    const installed = await p.api('/api/v1/admin/models/vits-piper-en_US-amy-low/install', { method: 'POST' });
    assert.equal(installed.status, 409);
    assert.match((await installed.json()).message, /already installed/);
    const bad = await p.api('/api/v1/admin/models/..%2Fetc/install', { method: 'POST' });
    assert.equal(bad.status, 400);
    await bad.arrayBuffer();
    const user = await fetch(`${p.url}/api/v1/admin/models/${PACK}/install`, { method: 'POST', headers: { authorization: `Bearer ${userKey}` } });
    assert.equal(user.status, 403);
    await user.arrayBuffer();
  });

  it('a download that fails is an error event, and nothing is installed', async () => {
    const r = await p.api('/api/v1/admin/models/vits-piper-en_US-ryan-medium/install', { method: 'POST' });
    const got = events(await r.text());
    assert.equal(got.at(-1)!.event, 'error');
    assert.match(got.at(-1)!.data.message, /404/);
    assert.equal((await p.api('/api/v1/admin/models/vits-piper-en_US-ryan-medium/verify', { method: 'POST' })).status, 404);
  });
});
