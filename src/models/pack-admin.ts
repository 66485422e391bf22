/**
 * Installing, verifying and removing packs while the server runs: what `parley models pull`, `verify`
 * and `rm` do, for the admin routes. One install at a time per server: each holds a download and
 * an unpack on disk, and an admin has no reason to run several at once.
 */
import { lstatSync } from 'node:fs';
import { rm, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { CatalogueEntry } from './catalogue.js';
import { detectPack } from './detect.js';
import { assertSafeId, partialFile, pullPack } from './pull.js';
import { verdictCacheDir, verifyPackVerdicts } from './verify.js';

export interface PackAdminOptions {
  modelsDir: string;
  dataDir: string;
  espeakDataDir: string;
  catalogue(): CatalogueEntry[];
  /** The downloads' fetch (tests: one serving the catalogue's URLs from loopback). */
  fetchImpl?: typeof fetch;
}

export interface PackCheck {
  id: string;
  usable: boolean;
  reason?: string;
}

export interface InstalledPack extends PackCheck {
  bytes: number;
  sha256: string;
}

/** Why a pack cannot be installed, removed or verified: the request's fault (a 4xx). */
export class PackRequestError extends Error {
  override name = 'PackRequestError';
  constructor(
    message: string,
    readonly kind: 'not_found' | 'conflict' | 'invalid',
  ) {
    super(message);
  }
}

/** Removes an installed pack (a symlinked pack: only the link) with its partial download and cached verdict. */
export async function removePack(modelsDir: string, dataDir: string, id: string): Promise<{ linkOnly: boolean }> {
  assertSafeId(id);
  const target = path.join(modelsDir, id);
  let linkOnly = false;
  try {
    linkOnly = lstatSync(target).isSymbolicLink();
  } catch {
    throw new PackRequestError(`${id} is not installed in ${modelsDir}`, 'not_found');
  }
  // A linked pack is someone else's folder: only the link goes.
  if (linkOnly) await unlink(target);
  else await rm(target, { recursive: true, force: true });
  await unlink(partialFile(modelsDir, id)).catch(() => undefined);
  await unlink(path.join(verdictCacheDir(dataDir), `${id}.json`)).catch(() => undefined);
  return { linkOnly };
}

export class PackAdmin {
  private installing: string | undefined;

  constructor(private readonly options: PackAdminOptions) {}

  /** The catalogue entry of `id`, checked installable now; throws PackRequestError. */
  installable(id: string): CatalogueEntry {
    const entry = this.options.catalogue().find((e) => e.id === id);
    if (!entry) throw new PackRequestError(`${id} is not in the catalogue (GET /v1/packs lists what is available)`, 'not_found');
    if (this.installing) throw new PackRequestError(`${this.installing} is being installed; install one pack at a time`, 'conflict');
    if (this.exists(id)) throw new PackRequestError(`${id} is already installed`, 'conflict');
    return entry;
  }

  private exists(id: string): boolean {
    try {
      lstatSync(path.join(this.options.modelsDir, id));
      return true;
    } catch {
      return false;
    }
  }

  /** Downloads, checks and unpacks the pack, then test-loads it (as `parley models pull` does). */
  async install(id: string, onProgress: (received: number, total: number | undefined) => void, signal?: AbortSignal): Promise<InstalledPack> {
    const entry = this.installable(id);
    this.installing = id;
    try {
      const { modelsDir, fetchImpl } = this.options;
      const result = await pullPack(entry, { modelsDir, onProgress, ...(fetchImpl ? { fetchImpl } : {}), ...(signal ? { signal } : {}) });
      return { ...(await this.check(id, result.dir)), bytes: result.bytes, sha256: result.sha256 };
    } finally {
      this.installing = undefined;
    }
  }

  /** Test-loads an installed pack now, in a child process (the verdict is cached for the next reload). */
  async verify(id: string): Promise<PackCheck> {
    assertSafeId(id);
    if (!this.exists(id)) throw new PackRequestError(`${id} is not installed`, 'not_found');
    return this.check(id, path.join(this.options.modelsDir, id));
  }

  async remove(id: string): Promise<{ linkOnly: boolean }> {
    if (this.installing === id) throw new PackRequestError(`${id} is being installed`, 'conflict');
    return removePack(this.options.modelsDir, this.options.dataDir, id);
  }

  private async check(id: string, dir: string): Promise<PackCheck> {
    const pack = await detectPack(id, dir);
    if ('problem' in pack) return { id, usable: false, reason: `not recognised as a pack: ${pack.problem}` };
    const [verdict] = await verifyPackVerdicts([pack], { cacheDir: verdictCacheDir(this.options.dataDir), espeakDataDir: this.options.espeakDataDir, fresh: true });
    return { id, usable: verdict?.usable ?? false, ...(verdict?.reason ? { reason: verdict.reason } : {}) };
  }
}
