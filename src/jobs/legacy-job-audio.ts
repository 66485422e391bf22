/**
 * Versions before migration 0005 kept the audio of queued jobs as files under `<dataDir>/jobs/`.
 * A server that starts moves the files it finds there into the database, so no job queued before
 * an upgrade is lost; a job whose file is on another node's disk waits for that node to do the same.
 */
import { readFile, readdir, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import type { JobRepository } from './job-repository.js';

export async function adoptLegacyJobAudio(jobs: JobRepository, dir: string): Promise<number> {
  const files = new Set(await readdir(dir).catch(() => [] as string[]));
  if (files.size === 0) return 0;
  let adopted = 0;
  for (const { id, audio_path: name } of await jobs.withLegacyAudioFile()) {
    if (name !== path.basename(name) || !files.has(name)) continue;
    await jobs.adoptLegacyAudio(id, new Uint8Array(await readFile(path.join(dir, name))));
    await rm(path.join(dir, name), { force: true });
    files.delete(name);
    adopted++;
  }
  // What is left belongs to no job (a crash between a job's end and the file's removal).
  for (const f of files) if (f.endsWith('.audio') || f.endsWith('.tmp')) await rm(path.join(dir, f), { force: true });
  await rmdir(dir).catch(() => undefined);
  return adopted;
}
