/**
 * What every builder hands the composition root besides its product: things to release on close,
 * background work to start on a serving node, readiness checks for /readyz.
 */

/**
 * Every opened resource registers a release function; they run in reverse order on shutdown
 * (graphile-worker withReleasers). A failing release is logged and the rest still run.
 */
export class Releasers {
  private readonly releasers: { name: string; release: () => unknown }[] = [];

  add(name: string, release: () => unknown): void {
    this.releasers.push({ name, release });
  }

  get size(): number {
    return this.releasers.length;
  }

  async releaseAll(log: (msg: string, err: unknown) => void = () => {}): Promise<void> {
    while (this.releasers.length) {
      const { name, release } = this.releasers.pop()!;
      try {
        await release();
      } catch (err) {
        log(`releasing ${name} failed`, err);
      }
    }
  }
}

/** Work a serving node does besides answering requests; started after listen, stopped first at shutdown. */
export interface BackgroundTask {
  name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** `ok` plus whatever the check shows an authenticated caller (counts, pack lists, the error). */
export interface ReadinessResult {
  ok: boolean;
  /** One sentence every caller of /readyz sees, even unauthenticated (e.g. offline at first start): nothing secret. */
  note?: string;
  [field: string]: unknown;
}

/** Named checks whose results /readyz shows; the node is ready when every one is ok. */
export type ReadinessChecks = Record<string, () => Promise<ReadinessResult>>;

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, unknown>;
  /** The checks' notes, for every caller. */
  notes: string[];
}

/** Run every check; one that throws counts as not ok with its message as the detail. */
export async function runReadinessChecks(checks: ReadinessChecks): Promise<ReadinessReport> {
  const results: Record<string, unknown> = {};
  const notes: string[] = [];
  let ready = true;
  for (const [name, check] of Object.entries(checks)) {
    const r: ReadinessResult = await check().catch((err: Error) => ({ ok: false, detail: err.message }));
    results[name] = r;
    if (!r.ok) ready = false;
    if (r.note) notes.push(r.note);
  }
  return { ready, checks: results, notes };
}
