#!/usr/bin/env node
// One-time set-up that `npm start` and `npm test` run first, so a fresh clone needs no other step.
// Uses only Node built-ins: it runs before node_modules exists.
//   - installs npm dependencies (npm ci) when node_modules is missing or older than the lock file;
//   - installs the Debian packages Parley uses when they are missing and we may (root + apt-get):
//       espeak-ng-data  phoneme data for Piper voices that do not ship their own (and the test fixtures)
//       ffmpeg          decodes uploads in formats the built-in decoders do not read (m4a/AAC, AIFF, ...)
//       bzip2           unpacks the .tar.bz2 model archives of `parley models pull`
//     `--test` also installs what only the tests use: espeak-ng (voices of known pitch), chromium and
//     fonts-dejavu-core (the playground's browser tests, driven by playwright-core), python3-onnx
//     (test/fixtures/make-fixtures.test.ts runs the script that makes the hand-made ONNX fixtures),
//     postgresql (the server programs, for the database-outage test's own cluster), openssl (the TLS tests' certificates),
//     python3-requests and python3-httpx (clients that send a whole body before they read an early answer),
//     prometheus (the metrics test scrapes a running server with it; promtool checks the alert rules),
//     buildah and debootstrap (test/deploy/container.test.ts builds and runs the Dockerfile's image without a container engine),
//     curl and jq (test/docs/examples.test.ts runs the docs' shell examples, which use them as a user would).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const forTests = process.argv.includes('--test');
const log = (msg) => process.stderr.write(`[setup] ${msg}\n`);

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], cwd: root, ...opts });
  return r.status === 0;
}

// 1. npm dependencies
const lock = path.join(root, 'package-lock.json');
const installed = path.join(root, 'node_modules', '.package-lock.json');
if (!existsSync(installed) || (existsSync(lock) && statSync(lock).mtimeMs > statSync(installed).mtimeMs + 1000)) {
  log('installing npm dependencies (npm ci)');
  if (!run('npm', existsSync(lock) ? ['ci', '--no-audit', '--no-fund'] : ['install', '--no-audit', '--no-fund'])) {
    log('npm install failed');
    process.exit(1);
  }
}

// 2. Debian packages
const wanted = [
  { pkg: 'espeak-ng-data', present: () => existsSync('/usr/lib/x86_64-linux-gnu/espeak-ng-data') || existsSync('/usr/share/espeak-ng-data') },
  { pkg: 'ffmpeg', present: () => onPath('ffmpeg') },
  { pkg: 'bzip2', present: () => onPath('bzip2') },
  ...(forTests
    ? [
        { pkg: 'espeak-ng', present: () => onPath('espeak-ng') },
        { pkg: 'chromium', present: () => onPath('chromium') },
        // A font for the playground's screenshot (chromium itself depends on none).
        { pkg: 'fonts-dejavu-core', present: () => existsSync('/usr/share/fonts/truetype/dejavu') },
        { pkg: 'python3-onnx', present: () => existsSync('/usr/lib/python3/dist-packages/onnx') },
        // The server programs: test/jobs/database-outage.test.ts runs a PostgreSQL cluster of its own to stop and kill.
        { pkg: 'postgresql', present: () => existsSync('/usr/lib/postgresql') && readdirSync('/usr/lib/postgresql').some((v) => existsSync(`/usr/lib/postgresql/${v}/bin/postgres`)) },
        // Self-signed certificates of the TLS tests.
        { pkg: 'openssl', present: () => onPath('openssl') },
        // Python's HTTP clients, which send a whole body before reading the answer (test/http/plugins/early-answers.test.ts).
        { pkg: 'python3-requests', present: () => existsSync('/usr/lib/python3/dist-packages/requests') },
        { pkg: 'python3-httpx', present: () => existsSync('/usr/lib/python3/dist-packages/httpx') },
        // test/observability/prometheus.test.ts scrapes a running server with the real Prometheus (promtool checks the alert rules).
        { pkg: 'prometheus', present: () => onPath('prometheus') && onPath('promtool') },
        // test/deploy/container.test.ts: buildah builds and runs the image, debootstrap makes the stand-in for its base image.
        { pkg: 'buildah', present: () => onPath('buildah') },
        { pkg: 'debootstrap', present: () => onPath('debootstrap') },
        // test/docs/examples.test.ts: the README's and docs/' shell examples call curl and read JSON with jq.
        { pkg: 'curl', present: () => onPath('curl') },
        { pkg: 'jq', present: () => onPath('jq') },
      ]
    : []),
];

function onPath(bin) {
  return spawnSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' }).status === 0;
}

const missing = wanted.filter((w) => !w.present()).map((w) => w.pkg);
if (missing.length) {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (isRoot && onPath('apt-get')) {
    log(`installing Debian packages: ${missing.join(' ')}`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    let ok = run('apt-get', ['install', '-y', '--no-install-recommends', ...missing], { env });
    if (!ok) ok = run('apt-get', ['update'], { env }) && run('apt-get', ['install', '-y', '--no-install-recommends', ...missing], { env });
    if (!ok) {
      log(`could not install ${missing.join(' ')}`);
      if (forTests) process.exit(1);
    }
  } else {
    const msg = `missing Debian packages: ${missing.join(' ')} (install them with: sudo apt-get install ${missing.join(' ')})`;
    if (forTests) {
      log(msg);
      process.exit(1);
    }
    log(`${msg}; Parley runs without them, but Piper voices without their own espeak-ng-data and uploads in formats such as m4a will not work`);
  }
}

// 3. Test models (--test only). The hand-made fixtures are in test/fixtures/; the real models the
// tests use come from PARLEY_TEST_MODELS_DIR or ../shared/models, and when neither exists they are
// pulled into a cache (PARLEY_TEST_CACHE_DIR) with `parley models pull`. A pull that fails is
// reported and the tests needing that model skip, naming it (PARLEY_TEST_REQUIRE_ALL=1 fails them).
if (forTests && !process.env.PARLEY_TEST_MODELS_DIR && !existsSync(path.resolve(root, '../shared/models'))) {
  const cache = path.resolve(process.env.PARLEY_TEST_CACHE_DIR ?? path.join(homedir(), '.cache/parley-test-models'));
  // Catalogue ids, as test/helpers/models.ts PULLED_AS names them.
  const wanted = ['silero-vad', 'sherpa-onnx-kws-zipformer-gigaspeech-3.3M-2024-01-01'].filter((id) => !existsSync(path.join(cache, id)));
  if (wanted.length) {
    log(`pulling the test models into ${cache}: ${wanted.join(' ')}`);
    mkdirSync(cache, { recursive: true });
    const env = { ...process.env, PARLEY_MODELS_DIR: cache, PARLEY_DATA_DIR: path.join(cache, '.data') };
    for (const id of wanted) {
      const ok = run(process.execPath, ['--import', 'tsx', 'src/cli/parley.ts', 'models', 'pull', id], { env, timeout: 15 * 60_000 });
      if (!ok) log(`could not pull ${id}; the tests that need it will skip and say so`);
    }
  }
}

// 4. The container test's build cache (--test only): on a machine where the test can build images
// but has never made its stand-in base, make it and build the image once, so that the test's own
// build fits the time one test file may take.
const canBuildImages = process.getuid?.() === 0 && onPath('buildah') && onPath('debootstrap');
if (forTests && canBuildImages) {
  const standIn = spawnSync('buildah', ['inspect', '--type', 'image', 'docker.io/library/node:22-bookworm-slim'], { stdio: 'ignore' });
  if (standIn.status !== 0) {
    log('building the container image once for test/deploy/container.test.ts (minutes; kept in buildah\'s cache)');
    const ok = run(process.execPath, ['--import', 'tsx', 'scripts/container-image-cache.ts'], { timeout: 45 * 60_000 });
    if (!ok) log('could not build the container image; test/deploy/container.test.ts will try again and say why');
  }
}

// Touch nothing else: models are the user's choice (parley models pull).
// better-sqlite3 12 (Node 20) is built for one Node ABI; 13 (Node 22 and later) ships Node-API binaries.
const sqliteDriver = Number(process.versions.node.split('.')[0]) >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3';
try {
  execFileSync(process.execPath, ['-e', `require('${sqliteDriver}')`], { cwd: root, stdio: 'ignore' });
} catch {
  log(`${sqliteDriver} did not load; rebuilding it`);
  run('npm', ['rebuild', sqliteDriver]);
}
