/** Speech of a known text for transcription tests, made by the Debian espeak-ng binary (check ESPEAK_MISSING first). */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** How espeak-ng speaks: its voice and words a minute. */
export interface Rendering {
  voice: string;
  speed: number;
}

/** WAV bytes of `text` spoken by espeak-ng (by default voice en+m3, 130 words a minute; SSML, so <break time="1s"/> is a pause). */
export function spoken(text: string, { voice, speed }: Rendering = { voice: 'en+m3', speed: 130 }): Uint8Array {
  const dir = mkdtempSync(path.join(tmpdir(), 'parley-espeak-'));
  try {
    const file = path.join(dir, 'speech.wav');
    execFileSync('espeak-ng', ['-m', '-v', voice, '-s', String(speed), '-w', file, `<speak>${text}</speak>`]);
    return new Uint8Array(readFileSync(file));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
