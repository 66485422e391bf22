/**
 * Speech of known pitch from the Debian `espeak-ng` binary: each voice variant declares its pitch
 * range in Hz (espeak-ng-data/voices/!v/<variant>, line "pitch <base> <top>"). Tests that need it
 * skip with a message when the binary is not installed (CI: apt-get install espeak-ng).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readWav } from './labelled-clips.js';
import { skipWhenMissing } from '../helpers/skip.js';

export const ESPEAK_MISSING = skipWhenMissing(
  spawnSync('espeak-ng', ['--version'], { stdio: 'ignore' }).status !== 0 &&
    'needs the espeak-ng binary on PATH (apt-get install espeak-ng) for voices of known pitch',
);

const dir = () => mkdtempSync(path.join(tmpdir(), 'parley-espeak-'));

/** Speaks `text` with `voice` (e.g. "en+m3"); returns mono samples and rate. */
export function speak(voice: string, text: string): { samples: Float32Array; sampleRate: number } {
  const file = path.join(dir(), 'out.wav');
  execFileSync('espeak-ng', ['-v', voice, '-w', file, text]);
  return readWav(file);
}

/** The declared [base, top] pitch in Hz of a variant such as "m3", read from espeak-ng's own data. */
export function declaredPitch(variant: string): [number, number] {
  const info = execFileSync('espeak-ng', ['--version'], { encoding: 'utf8' });
  const dataDir = /Data at:\s*(\S+)/.exec(info)?.[1] ?? '/usr/lib/x86_64-linux-gnu/espeak-ng-data';
  const text = readFileSync(path.join(dataDir, 'voices', '!v', variant), 'utf8');
  const match = /^pitch\s+(\d+)\s+(\d+)/m.exec(text);
  if (!match) throw new Error(`espeak-ng variant ${variant} declares no pitch`);
  return [Number(match[1]), Number(match[2])];
}
