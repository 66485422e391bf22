/** The pools whose defaults follow the machine: the cores the process may use, under a CPU affinity and a cgroup quota. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { availableCores, loadConfig } from '../src/config.js';
import { repoRoot } from './helpers/models.js';

describe('availableCores', () => {
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const cgroup = (files: Record<string, string>): string => {
    const dir = mkdtempSync(path.join(tmpdir(), 'parley-cgroup-'));
    dirs.push(dir);
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      writeFileSync(path.join(dir, name), text);
    }
    return dir;
  };

  it('is the CPUs the process may run on when no quota is set', () => {
    assert.equal(availableCores(cgroup({})), availableParallelism());
    assert.equal(availableCores(cgroup({ 'cpu.max': 'max 100000\n' })), availableParallelism());
    assert.equal(availableCores(cgroup({ 'cpu/cpu.cfs_quota_us': '-1\n', 'cpu/cpu.cfs_period_us': '100000\n' })), availableParallelism());
  });

  it("lowers it to a cgroup's quota, rounded up, never below 1", () => {
    assert.equal(availableCores(cgroup({ 'cpu.max': '150000 100000\n' })), Math.min(availableParallelism(), 2));
    assert.equal(availableCores(cgroup({ 'cpu.max': '50000 100000\n' })), 1);
    assert.equal(availableCores(cgroup({ 'cpu/cpu.cfs_quota_us': '100000\n', 'cpu/cpu.cfs_period_us': '100000\n' })), 1);
    assert.equal(availableCores(cgroup({ 'cpu.max': '6400000 100000\n' })), availableParallelism());
  });

  it('sizes the synthesis and transcription pools from it by default; each setting overrides its own', () => {
    const cores = availableCores();
    const config = loadConfig({});
    assert.equal(config.synthesis.espeakWorkers, Math.min(cores, 8));
    assert.equal(config.synthesis.workersPerEngine, cores);
    assert.equal(config.transcription.workers, cores);
    assert.equal(config.limits.maxConcurrentDecodes, cores);
    assert.equal(config.ffmpeg.maxConcurrent, cores);
    const set = loadConfig({ PARLEY_SYNTHESIS__ESPEAK_WORKERS: '3', PARLEY_TRANSCRIPTION__WORKERS: '5' });
    assert.equal(set.synthesis.espeakWorkers, 3);
    assert.equal(set.transcription.workers, 5);
  });

  it('follows a server started on one CPU (taskset -c 0)', () => {
    const script = "import { loadConfig } from './src/config.ts'; const c = loadConfig({}); console.log(JSON.stringify([c.synthesis.espeakWorkers, c.transcription.workers]));";
    const out = execFileSync('taskset', ['-c', '0', process.execPath, '--import', 'tsx', '--input-type=module', '-e', script], { cwd: repoRoot }).toString();
    assert.deepEqual(JSON.parse(out), [1, 1]);
  });
});
