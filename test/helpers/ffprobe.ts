/**
 * What ffprobe makes of a file: the codec and rate of its first audio stream, and its duration
 * measured by decoding every frame (a streamed file's header may not state its length).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface Probe {
  codec: string;
  sampleRate: number;
  channels: number;
  /** End of the last decoded frame, in seconds. */
  decodedSeconds: number;
}

/** `raw` describes headerless input (pcm): ffprobe cannot guess it. */
export async function probeAudio(bytes: Uint8Array, raw?: { format: string; sampleRate: number; channels: number }): Promise<Probe> {
  const dir = mkdtempSync(path.join(tmpdir(), 'parley-probe-'));
  const file = path.join(dir, 'audio');
  writeFileSync(file, bytes);
  try {
    const input = raw ? ['-f', raw.format, '-ar', String(raw.sampleRate), '-ac', String(raw.channels)] : [];
    const { stdout } = await run(
      'ffprobe',
      ['-v', 'error', ...input, '-select_streams', 'a:0', '-show_entries', 'stream=codec_name,sample_rate,channels', '-show_entries', 'frame=pts_time,nb_samples', '-of', 'json', file],
      { maxBuffer: 64 * 1024 * 1024 },
    );
    const json = JSON.parse(stdout) as { streams: Array<{ codec_name: string; sample_rate: string; channels: number }>; frames: Array<{ pts_time?: string; nb_samples?: number }> };
    const stream = json.streams[0];
    if (!stream) throw new Error('ffprobe found no audio stream');
    const last = json.frames.at(-1);
    return {
      codec: stream.codec_name,
      sampleRate: Number(stream.sample_rate),
      channels: stream.channels,
      decodedSeconds: last ? Number(last.pts_time ?? 0) + Number(last.nb_samples ?? 0) / Number(stream.sample_rate) : 0,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
