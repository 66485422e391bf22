/** Pack archives for install tests: a fixture pack in one folder named like the catalogue pack, as upstream archives are. */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
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

/** A fetch for `packFetch` that asks `base` for the catalogue URL's file name instead of its host. */
export function fetchFrom(base: string): typeof fetch {
  return (url, init) => fetch(`${base}/${path.basename(new URL(String(url)).pathname)}`, init);
}
