/**
 * Every example of README.md and docs/*.md, run as written against a real `parley serve`, so no
 * example can drift from the code without a test failing.
 *
 * An example is a fenced `sh`, `js` or `python` block. The HTML comment on the line before it says
 * how it runs (no comment: `run`):
 *   <!-- example: run -->                   run against the shared server (the shared tiny recogniser and
 *                                           Silero VAD installed); exits 0, and curl fails on any HTTP error
 *   <!-- example: needs <what>… -->         like run, with packs: `recogniser` and `vad` are the test's own
 *                                           (the shared tiny English recogniser, Silero VAD); any other pack
 *                                           id (or `internet`) is one these machines cannot download, so the
 *                                           example is skipped with the pack named
 *   <!-- example: key -->                   `export KEY=sk_...`: the test's key stands in for the printed one
 *   <!-- example: serves -->                its `npm start` line starts a server (settings in front), on a
 *                                           fresh data dir; lines before it run first, lines after it once
 *                                           it is ready; then it must stop on SIGTERM with exit code 0
 *   <!-- example: elsewhere <file> -->      run by another test or by CI: the file must exist and name the
 *                                           page, so the example and what runs it point at each other
 *
 * What the test changes, and why: ports (8080, 9464…) become free ones, so the run can sit beside
 * other tests; `npm start` becomes the command its start script ends with (`node bin/parley.js
 * serve`), as the set-up and build before it are what `npm test` itself has just run, and rebuilding
 * `dist/` under the other tests would pull it from under them; `npx parley` is this checkout's
 * `bin/parley.js`; curl gets `--fail-with-body`, so an HTTP error fails the example. Files an
 * example reads as the user's own (`call.wav`, `ann.wav`, `long.mp3`, `meeting.wav`, `speech.raw`) are speech
 * from the labelled corpus. Examples of a page run in order in one folder, so a file one example
 * writes (`hello.wav`) is there for the next.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { corpusFile, needs, repoRoot, sttTestPacks } from '../helpers/models.js';
import { freePort, startServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { skipWhenMissing } from '../helpers/skip.js';

type How =
  | { kind: 'run'; packs: string[] }
  | { kind: 'key' }
  | { kind: 'serves' }
  | { kind: 'elsewhere'; file: string };

interface Example {
  page: string;
  line: number;
  lang: 'sh' | 'js' | 'python';
  how: How;
  code: string;
}

/** The packs the test installs itself, by the names examples use for them. */
const OWN_PACKS = new Set(['recogniser', 'vad']);

function howOf(comment: string | undefined, where: string): How {
  const m = comment?.match(/^<!-- example: (.+?) -->$/);
  if (!m) return { kind: 'run', packs: [] };
  const [word, ...rest] = m[1]!.trim().split(/\s+/);
  if (word === 'run' && rest.length === 0) return { kind: 'run', packs: [] };
  if (word === 'needs' && rest.length > 0) return { kind: 'run', packs: rest };
  if (word === 'key' && rest.length === 0) return { kind: 'key' };
  if (word === 'serves' && rest.length === 0) return { kind: 'serves' };
  if (word === 'elsewhere' && rest.length === 1) return { kind: 'elsewhere', file: rest[0]! };
  throw new Error(`${where}: unknown example tag ${comment}`);
}

export function examplesOf(page: string, text: string): Example[] {
  const lines = text.split('\n');
  const examples: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = lines[i]!.match(/^```(\w*)\s*$/);
    if (!fence) continue;
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    assert.ok(end > i, `${page}:${i + 1}: a code block that never closes`);
    const lang = fence[1] === 'bash' || fence[1] === 'shell' ? 'sh' : fence[1];
    if (lang === 'sh' || lang === 'js' || lang === 'python') {
      let prev = i - 1;
      while (prev >= 0 && lines[prev]!.trim() === '') prev--;
      const comment = prev >= 0 && lines[prev]!.startsWith('<!-- example:') ? lines[prev] : undefined;
      const where = `${page}:${i + 1}`;
      const how = howOf(comment, where);
      assert.ok(lang !== 'python' || how.kind === 'elsewhere', `${where}: a Python example must say which test runs its client (<!-- example: elsewhere <file> -->)`);
      examples.push({ page, line: i + 1, lang, how, code: lines.slice(i + 1, end).join('\n') });
    }
    i = end;
  }
  return examples;
}

const pages = ['README.md', ...readdirSync(path.join(repoRoot, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
const examples = pages.flatMap((page) => examplesOf(page, readFileSync(path.join(repoRoot, page), 'utf8')));

/** Every port an example names (`localhost:8080`, `PARLEY_METRICS__PORT=9464`) → a free one; 8080 is the server's. */
async function portMap(code: string, serverPort: number | undefined): Promise<Map<string, number>> {
  const map = new Map<string, number>();
  for (const m of code.matchAll(/(?:localhost:|127\.0\.0\.1:|PORT=)(\d{2,5})\b/g)) {
    const port = m[1]!;
    if (map.has(port)) continue;
    map.set(port, port === '8080' && serverPort !== undefined ? serverPort : await freePort());
  }
  return map;
}

function withPorts(code: string, ports: Map<string, number>): string {
  return code.replace(/(localhost:|127\.0\.0\.1:|PORT=)(\d{2,5})\b/g, (all, prefix: string, port: string) => (ports.has(port) ? `${prefix}${ports.get(port)}` : all));
}

/** Definitions a shell example runs under (see the header). */
const SHELL_PRELUDE = [
  'set -euo pipefail',
  'curl() { command curl --fail-with-body --silent --show-error "$@"; }',
  `npx() { if [ "$1" = parley ]; then shift; node ${JSON.stringify(path.join(repoRoot, 'bin/parley.js'))} "$@"; else command npx "$@"; fi; }`,
].join('\n');

interface Outcome {
  status: number | null;
  output: string;
}

function run(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, output });
    });
  });
}

/** The user's own files that examples read, made from the labelled corpus. */
function userFiles(dir: string): void {
  copyFileSync(corpusFile('en/librispeech-1089-134686-0001.wav'), path.join(dir, 'call.wav'));
  copyFileSync(corpusFile('en/librispeech-1221-135766-0001.wav'), path.join(dir, 'meeting.wav'));
  copyFileSync(corpusFile('en/librivox-sense-and-sensibility-0890.wav'), path.join(dir, 'ann.wav'));
  const mp3 = spawnSync('ffmpeg', ['-loglevel', 'error', '-y', '-i', path.join(dir, 'call.wav'), '-b:a', '64k', path.join(dir, 'long.mp3')]);
  assert.equal(mp3.status, 0, `ffmpeg made long.mp3: ${mp3.stderr}`);
  const raw = spawnSync('ffmpeg', ['-loglevel', 'error', '-y', '-i', path.join(dir, 'call.wav'), '-f', 's16le', '-ar', '16000', '-ac', '1', path.join(dir, 'speech.raw')]);
  assert.equal(raw.status, 0, `ffmpeg made speech.raw: ${raw.stderr}`);
  // js examples import the packages a user installs beside them (smallestai, openai).
  symlinkSync(path.join(repoRoot, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
}

const missing = needs({ models: sttTestPacks, corpus: true }) || skipWhenMissing(['curl', 'ffmpeg', 'jq'].find((p) => spawnSync('sh', ['-c', `command -v ${p}`]).status !== 0) && 'needs curl, ffmpeg and jq on PATH');
const counts = { all: examples.length, ran: 0, elsewhere: 0, skipped: new Map<string, number>() };

describe('the examples of the README and docs/', { skip: missing }, () => {
  let server: ServerProcess;
  const folders = new Map<string, string>();
  const folderOf = (page: string) => {
    let dir = folders.get(page);
    if (!dir) {
      dir = mkdtempSync(path.join(tmpdir(), 'parley-examples-'));
      userFiles(dir);
      folders.set(page, dir);
    }
    return dir;
  };

  before(async () => {
    server = await startServerProcess(sttTestPacks, { PARLEY_LOG_LEVEL: 'error' }, { built: true });
  });
  after(async () => {
    await server?.stop();
    for (const dir of folders.values()) rmSync(dir, { recursive: true, force: true });
    const skipped = [...counts.skipped].map(([pack, n]) => `${n} for ${pack}`).join(', ') || 'none';
    console.log(`[examples] ${counts.all} examples: ${counts.ran} ran here, ${counts.elsewhere} run by another test or CI, skipped: ${skipped}`);
  });

  it('has pages that each link back to the README, and a README a newcomer reads in minutes (≤ 250 lines)', () => {
    for (const page of pages.filter((p) => p.startsWith('docs/'))) {
      assert.match(readFileSync(path.join(repoRoot, page), 'utf8'), /\]\(\.\.\/README\.md\)/, `${page} links back to the README`);
    }
    const readmeLines = readFileSync(path.join(repoRoot, 'README.md'), 'utf8').split('\n').length;
    assert.ok(readmeLines <= 250, `README.md has ${readmeLines} lines`);
  });

  it('finds the examples of every page, each tagged with a known way to run', () => {
    assert.ok(examples.length >= 20, `found ${examples.length} examples`);
    assert.ok(examples.some((e) => e.page === 'README.md' && e.how.kind === 'serves'), 'the README starts a server');
  });

  for (const example of examples) {
    const name = `${example.page}:${example.line} (${example.lang}, ${example.how.kind === 'run' && example.how.packs.length ? `needs ${example.how.packs.join(' ')}` : example.how.kind})`;
    const unavailable = example.how.kind === 'run' ? example.how.packs.filter((p) => !OWN_PACKS.has(p)) : [];
    const skip = unavailable.length > 0 && `needs ${unavailable.map((p) => (p === 'internet' ? 'the internet' : `the pack ${p}`)).join(', ')}, which these machines cannot reach`;
    it(name, { skip }, async () => {
      const env = { ...process.env, KEY: server.key, PARLEY_DATA_DIR: path.dirname(server.modelsDir), PARLEY_MODELS_DIR: server.modelsDir };
      const cwd = folderOf(example.page);
      const port = Number(new URL(server.url).port);
      switch (example.how.kind) {
        case 'elsewhere': {
          const file = path.join(repoRoot, example.how.file);
          assert.ok(existsSync(file), `${example.how.file} exists`);
          assert.ok(readFileSync(file, 'utf8').includes(example.page), `${example.how.file} names ${example.page}, whose example it runs`);
          counts.elsewhere++;
          return;
        }
        case 'key': {
          assert.match(example.code.trim(), /^export KEY=sk_\S*(\s+#.*)?$/, 'a key example only sets KEY');
          counts.ran++;
          return;
        }
        case 'serves': {
          await servesExample(example, cwd, env);
          counts.ran++;
          return;
        }
        case 'run': {
          const code = withPorts(example.code, await portMap(example.code, port));
          const outcome =
            example.lang === 'sh'
              ? await run('bash', ['-c', `${SHELL_PRELUDE}\n${code}`], { cwd, env })
              : await (() => {
                  const file = path.join(cwd, `example-${example.line}.mjs`);
                  writeFileSync(file, code);
                  return run(process.execPath, [file], { cwd, env });
                })();
          assert.equal(outcome.status, 0, `${example.page}:${example.line} failed:\n${outcome.output}`);
          counts.ran++;
          return;
        }
      }
    });
    if (unavailable.length > 0) for (const p of unavailable) counts.skipped.set(p, (counts.skipped.get(p) ?? 0) + 1);
  }
});

/** The environment without a key, as on a machine where the server has not printed one yet. */
function withoutKey(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { PARLEY_API_KEY: _apiKey, KEY: _key, ...rest } = env;
  return rest;
}

/**
 * A serving example: the line with `npm start` (settings in front) is the server, on free ports and a
 * fresh data dir; lines before it run first, in its environment (e.g. making a key in its database);
 * lines after it run once it is ready, with the key it printed if it printed one.
 */
async function servesExample(example: Example, cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  const lines = example.code.split('\n');
  const at = lines.findIndex((l) => /\bnpm start\b/.test(l));
  assert.ok(at >= 0, `${example.page}:${example.line}: a serving example has an npm start line`);
  const ports = await portMap(example.code, undefined);
  const serverLine = withPorts(lines[at]!.replace(/\s+#.*$/, ''), ports).trim();
  assert.match(serverLine, /^((?:[A-Z_][A-Z0-9_]*=\S*\s+)*)npm start$/, `${example.page}:${example.line}: the server line is [SETTING=value …] npm start`);
  const port = ports.get('8080') ?? (await freePort());
  const dataDir = mkdtempSync(path.join(tmpdir(), 'parley-examples-serve-'));
  // One warm-up sentence per worker instead of two paragraphs: the warm-up only evens out first-request
  // times, and tests time nothing. No download at first start: tests reach no network
  // (test/models/first-run.test.ts runs a first start against a loopback one).
  const serverEnv = {
    ...withoutKey(env),
    PORT: String(port),
    HOST: '127.0.0.1',
    PARLEY_DATA_DIR: dataDir,
    PARLEY_MODELS_DIR: path.join(dataDir, 'models'),
    PARLEY_SYNTHESIS__WARM_UP_ROUNDS: '0',
    PARLEY_MODELS_AUTO_PULL: 'false',
  };
  const before = lines.slice(0, at).map((l) => withPorts(l, ports)).join('\n');
  const serve = serverLine.replace(/npm start$/, `exec node ${JSON.stringify(path.join(repoRoot, 'bin/parley.js'))} serve`);
  const child = spawn('bash', ['-c', `${SHELL_PRELUDE}\n${before}\n${serve}`], { cwd, env: serverEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  try {
    const deadline = Date.now() + 120_000;
    for (;;) {
      assert.ok(child.exitCode === null && Date.now() < deadline, `the server of ${example.page}:${example.line} did not become ready:\n${output}`);
      if (await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status === 200, () => false)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const key = output.match(/\bsk_[A-Za-z0-9]{32,}\b/)?.[0];
    if (at === 0) assert.ok(key, `a first start prints a key:\n${output}`);
    const after = lines.slice(at + 1).map((l) => withPorts(l, ports)).join('\n');
    if (after.trim()) {
      const outcome = await run('bash', ['-c', `${SHELL_PRELUDE}\n${after}`], { cwd, env: { ...serverEnv, ...(key ? { KEY: key } : {}) } });
      assert.equal(outcome.status, 0, `${example.page}:${example.line} failed:\n${outcome.output}`);
    }
  } finally {
    if (child.exitCode === null) child.kill('SIGTERM');
    const code = child.exitCode ?? (await new Promise<number | null>((r) => child.once('exit', (c) => r(c))));
    rmSync(dataDir, { recursive: true, force: true });
    assert.equal(code, 0, `the server of ${example.page}:${example.line} stopped with exit code ${code}:\n${output}`);
  }
}
