/**
 * The container image: the repository's Dockerfile, built unchanged and run as `docker run` would
 * run it (its entry point, user, environment, volumes and health check), with buildah in chroot
 * isolation on a local stand-in for `node:22-bookworm-slim` (test/helpers/container-image.ts says
 * why and how). Checked as a user sees it: the server gets ready, speaks, transcribes, pulls a pack
 * with `parley models pull`, runs as uid 1000 and drains on SIGTERM, exiting 0. These are the
 * Docker examples of README.md and docs/deployment.md (build, build with PARLEY_PACKS, run, and
 * `parley models` in the image), which no Docker engine on these machines could run as written.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BASE_IMAGE, TEST_IMAGE, buildah, buildTestImage, ensureStandInBase, imageConfig, imageToolsMissing, type ImageConfig } from '../helpers/container-image.js';
import { REAL_TEST_MODELS, corpusFile, modelsDirWith, needs, repoRoot, sharedModel } from '../helpers/models.js';
import { packArchive } from '../helpers/pack-archive.js';
import { processTree } from '../helpers/process-tree.js';
import { startTestServer } from '../helpers/server.js';
import { freePort } from '../helpers/server-process.js';
import { wordErrorRate } from '../helpers/transcript-accuracy.js';

const IMAGE = TEST_IMAGE;
const KEY = `sk_${'d'.repeat(40)}`;
/** The fixture pack `parley models pull` installs inside the image, served from loopback. */
const PULLED_PACK = 'fixture-piper-voice';
const SPEECH = 'en/cmu-arctic-axb-a0004.wav';

const skip: string | false = imageToolsMissing() || needs({ models: [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH], corpus: true });

/** The transcript the corpus manifest gives SPEECH. */
function speechLabel(): string {
  const manifest = readFileSync(corpusFile('manifest.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { file: string; text: string });
  return manifest.find((e) => e.file === SPEECH)!.text;
}

const log = (line: string) => process.stderr.write(`[container] ${line}\n`);

/** A copy of a folder for a volume, owned by the image's user (uid/gid 1000) as a volume it writes must be. */
function ownedByNode(dir: string): void {
  chownSync(dir, 1000, 1000);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) ownedByNode(p);
    else chownSync(p, 1000, 1000);
  }
}

/** The server's own process under `buildah run` (which kills, rather than passes on, a SIGTERM it gets). */
function serverProcess(running: Running): number {
  const pid = processTree(running.child.pid!).find((p) => {
    const argv = readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0');
    return argv[0] === 'node' && argv[1] === '/usr/local/bin/parley' && argv[2] === 'serve';
  });
  assert.ok(pid, 'the server process runs under buildah run');
  return pid;
}

interface Running {
  child: ChildProcess;
  exit: Promise<number | null>;
  output: () => string;
}

describe('the container image', () => {
  let config: ImageConfig;
  let container = '';
  let work = '';
  let dataDir = '';
  let modelsDir = '';
  let catalogue = '';
  let port = 0;
  let url = '';
  let packServer: http.Server | undefined;
  let server: Running | undefined;

  /** `buildah run` in the working container, with the volumes, the test catalogue and `env`. */
  function runArgs(command: string[], env: Record<string, string> = {}): string[] {
    return [
      'run', '--isolation', 'chroot', '--network', 'host',
      '-v', `${dataDir}:/data`, '-v', `${modelsDir}:/models`,
      // The pull's catalogue names the fixture pack on loopback instead of the release assets.
      '-v', `${catalogue}:/app/src/models/catalogue.json:ro`,
      ...Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`]),
      container, '--', ...command,
    ];
  }

  function runInImage(command: string[], env: Record<string, string> = {}): Running {
    const child = spawn('buildah', runArgs(command, env), { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr!.on('data', (b: Buffer) => (output += b.toString()));
    const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return { child, exit, output: () => output };
  }

  const serverEnv = () => ({ PORT: String(port), PARLEY_API_KEY: KEY, PARLEY_LOG_LEVEL: 'warn' });

  // Making the stand-in and a build without cached layers take minutes.
  before(async () => {
    if (skip) return;
    work = mkdtempSync(path.join(tmpdir(), 'parley-container-'));
    const made = ensureStandInBase(log);
    log(`stand-in ${BASE_IMAGE}: ${made}`);

    log(`built ${IMAGE} in ${(await buildTestImage(repoRoot)).toFixed(0)} s`);
    config = imageConfig(IMAGE)!;

    dataDir = path.join(work, 'data');
    modelsDir = path.join(work, 'models');
    mkdirSync(dataDir);
    mkdirSync(modelsDir);
    for (const name of [REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH]) cpSync(sharedModel(name), path.join(modelsDir, name), { recursive: true, dereference: true });
    ownedByNode(dataDir);
    ownedByNode(modelsDir);

    const archive = packArchive(PULLED_PACK);
    packServer = http.createServer((req, res) => (req.url === `/${PULLED_PACK}.tar.bz2` ? res.writeHead(200, { 'content-length': archive.length }).end(archive) : res.writeHead(404).end()));
    await new Promise<void>((resolve) => packServer!.listen(0, '127.0.0.1', resolve));
    const packUrl = `http://127.0.0.1:${(packServer.address() as AddressInfo).port}/${PULLED_PACK}.tar.bz2`;
    catalogue = path.join(work, 'catalogue.json');
    writeFileSync(
      catalogue,
      JSON.stringify({
        presets: { recommended: [PULLED_PACK] },
        entries: [{ id: PULLED_PACK, kind: 'tts-vits', description: 'a fixture voice', languages: ['en'], url: packUrl, format: 'tar.bz2', size: archive.length, sha256: createHash('sha256').update(archive).digest('hex'), licence: 'test', models: ['tts-v2'] }],
      }),
    );
    chownSync(catalogue, 1000, 1000);

    container = buildah(['from', '--name', `parley-container-test-${process.pid}`, IMAGE]).trim();
    // buildah 1.28 mounts a volume of its own over every path the image declares as a VOLUME when
    // `run` gets two -v (one works); a container engine's -v replaces the image's volume, as this does.
    buildah(['config', '--volume', '/data-', '--volume', '/models-', container]);
    port = await freePort();
    url = `http://127.0.0.1:${port}`;
    const ran = Date.now();
    // As a container engine starts it: the entry point followed by the command.
    server = runInImage([...(config.Entrypoint ?? []), ...(config.Cmd ?? [])], serverEnv());
    for (;;) {
      const exited = await Promise.race([server.exit, new Promise((r) => setTimeout(r, 200, 'running'))]);
      if (exited !== 'running') throw new Error(`the server in the image exited ${exited}:\n${server.output()}`);
      if (Date.now() - ran > 180_000) throw new Error(`the server in the image was not ready after 180 s:\n${server.output()}`);
      const ready = await fetch(`${url}/readyz`).then((r) => r.status === 200, () => false);
      if (ready) break;
    }
    log(`ready ${((Date.now() - ran) / 1000).toFixed(1)} s after the run began`);
  }, { timeout: 45 * 60_000 });

  after(async () => {
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGKILL');
      await server.exit;
    }
    packServer?.close();
    if (container) spawnSync('buildah', ['rm', container], { stdio: 'ignore' });
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('starts `parley serve` as the unprivileged user node, with its data and models in the volumes', { skip }, () => {
    assert.deepEqual(config.Entrypoint, ['parley']);
    assert.deepEqual(config.Cmd, ['serve']);
    assert.equal(config.User, 'node');
    assert.deepEqual(Object.keys(config.Volumes ?? {}).sort(), ['/data', '/models']);
    assert.ok(config.Env?.includes('PARLEY_DATA_DIR=/data') && config.Env.includes('PARLEY_MODELS_DIR=/models'), String(config.Env));
    const status = readFileSync(`/proc/${serverProcess(server!)}/status`, 'utf8');
    assert.match(status, /^Uid:\t1000\t1000\t1000\t1000$/m, 'the server runs as uid 1000');
    const database = path.join(dataDir, 'parley.db');
    assert.ok(existsSync(database), `the server keeps its database in /data: ${readdirSync(dataDir).join(', ')}`);
    assert.equal(statSync(database).uid, 1000, 'written by uid 1000');
  });

  it('is ready, and its HEALTHCHECK command says so', { skip }, async () => {
    assert.equal((await fetch(`${url}/readyz`)).status, 200);
    const test = config.Healthcheck?.Test ?? [];
    assert.equal(test[0], 'CMD', 'the check runs without a shell');
    const check = spawnSync('buildah', runArgs(test.slice(1), serverEnv()), { encoding: 'utf8' });
    assert.equal(check.status, 0, `the health check passes: ${check.stderr}`);
    const elsewhere = spawnSync('buildah', runArgs(test.slice(1), { PORT: String(await freePort()) }), { encoding: 'utf8' });
    assert.equal(elsewhere.status, 1, 'and fails where nothing answers');
  });

  it('speaks with the built-in eSpeak voice', { skip }, async () => {
    const res = await fetch(`${url}/api/v1/tts-v2/get_speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Parley runs in a container.', voice_id: 'espeak-en-us-male' }),
    });
    const body = Buffer.from(await res.arrayBuffer());
    assert.equal(res.status, 200, body.toString());
    assert.equal(res.headers.get('content-type'), 'audio/wav');
    assert.equal(body.subarray(0, 4).toString(), 'RIFF');
    assert.ok(body.length > 16_000, `${body.length} bytes of speech`);
  });

  it('transcribes speech with the recogniser in the models volume, word for word as a checkout does', { skip }, async () => {
    const transcribe = async (base: string, key: string) => {
      const res = await fetch(`${base}/api/v1/stt/get_text`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'audio/wav' },
        body: new Uint8Array(readFileSync(corpusFile(SPEECH))),
      });
      const body = (await res.json()) as { transcription?: string };
      assert.equal(res.status, 200, JSON.stringify(body));
      return body.transcription ?? '';
    };
    const inImage = await transcribe(url, KEY);
    // The tiny test recogniser gets about half the words wrong, so the image is held to what the
    // same packs give outside it.
    const checkout = await startTestServer({ engines: true, config: { logLevel: 'silent', modelsDir: modelsDirWith([REAL_TEST_MODELS.VAD, REAL_TEST_MODELS.STREAMING_ENGLISH]), synthesis: { warmUpRounds: 0 } } });
    after(() => checkout.close());
    const outside = await transcribe(checkout.url, checkout.key);
    assert.equal(inImage, outside);
    const label = speechLabel();
    assert.ok(wordErrorRate(label, inImage) < 1, `"${inImage}" shares words with "${label}"`);
  });

  it('installs a pack with `parley models pull` run in the image', { skip }, async () => {
    const pull = runInImage([...(config.Entrypoint ?? []), 'models', 'pull', PULLED_PACK]);
    assert.equal(await pull.exit, 0, pull.output());
    const installed = path.join(modelsDir, PULLED_PACK);
    assert.ok(existsSync(path.join(installed, '.parley-pack.json')), `installed in /models: ${readdirSync(modelsDir).join(', ')}`);
    assert.equal(statSync(installed).uid, 1000);
    const list = spawnSync('buildah', runArgs([...(config.Entrypoint ?? []), 'models', 'list']), { encoding: 'utf8' });
    assert.match(list.stdout, new RegExp(`^  ${PULLED_PACK}  tts-vits`, 'm'), list.stdout + list.stderr);
  });

  it('bakes the packs named in the PARLEY_PACKS build argument into the image, for a new volume to start with', { skip }, async () => {
    const tag = `${IMAGE}-packs`;
    // The build's pull reads the test catalogue through a mount that exists for its RUN steps only.
    await buildTestImage(repoRoot, tag, ['--build-arg', `PARLEY_PACKS=${PULLED_PACK}`, '-v', `${catalogue}:/app/src/models/catalogue.json:ro`]);
    const baked = buildah(['from', tag]).trim();
    try {
      // No -v: the container gets a volume of its own at /models holding the image's content, as a
      // new named volume does under Docker.
      const listed = buildah(['run', '--isolation', 'chroot', baked, '--', 'ls', '-na', '/models', `/models/${PULLED_PACK}`]);
      assert.match(listed, new RegExp(`^d\\S+\\s+\\d+\\s+1000\\s+1000\\s.*\\s${PULLED_PACK}$`, 'm'), listed);
      assert.match(listed, /\s\.parley-pack\.json$/m, listed);
      const shipped = JSON.parse(buildah(['run', '--isolation', 'chroot', baked, '--', 'cat', '/app/src/models/catalogue.json'])) as { entries: unknown[] };
      assert.ok(shipped.entries.length > 1, 'the mounted catalogue stayed out of the image');
    } finally {
      spawnSync('buildah', ['rm', baked], { stdio: 'ignore' });
      spawnSync('buildah', ['rmi', tag], { stdio: 'ignore' });
    }
  });

  it('finishes in-flight work on SIGTERM and exits 0', { skip }, async () => {
    const running = server!;
    // A request in flight when the signal comes must still be answered.
    const inFlight = fetch(`${url}/api/v1/tts-v2/get_speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'One more sentence before the server stops. And another one after it.', voice_id: 'espeak-en-us-male' }),
    });
    await new Promise((r) => setTimeout(r, 50));
    // As `docker stop` does: SIGTERM to the entry point's process.
    process.kill(serverProcess(running), 'SIGTERM');
    const res = await inFlight;
    assert.equal(res.status, 200);
    assert.equal(Buffer.from(await res.arrayBuffer()).subarray(0, 4).toString(), 'RIFF');
    assert.equal(await running.exit, 0, running.output());
  });
});
