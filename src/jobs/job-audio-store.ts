/**
 * Audio of queued jobs, one file per job under `<dataDir>/jobs/`, kept until transcription has
 * ended. Written to a temporary name and renamed, so a crash never leaves a half file under the
 * name the job row points to.
 */
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

export class JobAudioStore {
  constructor(readonly dir: string) {}

  async open(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
  }

  /** Store the bytes; returns the file name to keep on the job row. */
  async save(jobId: string, bytes: Uint8Array): Promise<string> {
    const name = `${jobId}.audio`;
    const tmp = path.join(this.dir, `${name}.${process.pid}.tmp`);
    await writeFile(tmp, bytes);
    await rename(tmp, path.join(this.dir, name));
    return name;
  }

  async read(name: string): Promise<Uint8Array> {
    return new Uint8Array(await readFile(this.resolve(name)));
  }

  async remove(name: string): Promise<void> {
    await rm(this.resolve(name), { force: true });
  }

  /** Remove a file unless it was written less than `ageMs` before `now`. */
  async removeIfOlderThan(name: string, ageMs: number, now: number): Promise<void> {
    const info = await stat(this.resolve(name)).catch(() => null);
    if (info && now - info.mtimeMs >= ageMs) await this.remove(name);
  }

  /** Every stored file name, and temporary files a crash left (for sweeping what no job points to). */
  async list(): Promise<string[]> {
    return (await readdir(this.dir)).filter((f) => f.endsWith('.audio') || f.endsWith('.tmp'));
  }

  private resolve(name: string): string {
    // Names come from our own rows; refuse anything that would leave the folder anyway.
    if (name !== path.basename(name)) throw new Error(`bad job audio name ${name}`);
    return path.join(this.dir, name);
  }
}
