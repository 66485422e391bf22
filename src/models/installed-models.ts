/**
 * The packs the server runs on: scan the models dir, verify each pack (files, checksums, a test
 * load in a child process, so a bad pack cannot end the server), build the engines, and swap them
 * in whole. `reload()` repeats this while the server runs; engines of the previous set are closed
 * after a grace period, so requests already using them finish.
 */
import { loadEngineSet, type EngineSet, type EngineSetOptions } from '../engines/engine-set.js';
import type { ModelsReport } from '../http/routes/models.js';
import { scanModelPacks } from './detect.js';
import { verifyPacks } from './verify.js';

export interface InstalledModelsOptions extends EngineSetOptions {
  modelsDir: string;
  /** Where test-load verdicts are cached between starts. */
  verdictCacheDir: string;
  /** Called with each new engine set, before the old one is retired (the voice registry swap). */
  onSwap(set: EngineSet): void;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /** How long a replaced engine set stays open for requests already using it. */
  retireAfterMs?: number;
}

export class InstalledModels {
  private set: EngineSet | undefined;
  private last: ModelsReport = { loaded: [], skipped: [], problems: [], voices: 0, loadedAt: new Date(0).toISOString() };
  private readonly retiring = new Set<{ set: EngineSet; timer: NodeJS.Timeout }>();
  private loading: Promise<ModelsReport> | undefined;

  constructor(private readonly options: InstalledModelsOptions) {}

  get engines(): EngineSet | undefined {
    return this.set;
  }

  report(): ModelsReport {
    return this.last;
  }

  /** Scan, verify, load and swap. Concurrent calls share one run. */
  reload(): Promise<ModelsReport> {
    this.loading ??= this.load().finally(() => (this.loading = undefined));
    return this.loading;
  }

  private async load(): Promise<ModelsReport> {
    const { options } = this;
    const scan = await scanModelPacks(options.modelsDir);
    const verdict = await verifyPacks(scan.packs, { cacheDir: options.verdictCacheDir, espeakDataDir: options.espeakDataDir });
    const set = await loadEngineSet(verdict.usable, options);
    const failed = new Set(set.failed.map((f) => f.pack));
    const report: ModelsReport = {
      loaded: verdict.usable.filter((p) => !failed.has(p.id)).map((p) => ({ id: p.id, kind: p.kind, languages: p.languages })),
      skipped: [...verdict.skipped.map((s) => ({ id: s.pack.id, reason: s.reason })), ...set.failed.map((f) => ({ id: f.pack, reason: f.reason }))],
      problems: scan.problems.map((p) => ({ id: p.id, reason: p.reason })),
      voices: set.tts.reduce((n, e) => n + e.listVoices().length, 0),
      loadedAt: new Date().toISOString(),
    };
    for (const s of report.skipped) options.log.warn({ pack: s.id, reason: s.reason }, 'model pack skipped');
    for (const p of report.problems) options.log.warn({ folder: p.id, reason: p.reason }, 'not a model pack');
    options.log.info({ packs: report.loaded.map((p) => p.id), skipped: report.skipped.length }, 'model packs loaded');

    const previous = this.set;
    this.set = set;
    this.last = report;
    options.onSwap(set);
    if (previous) this.retire(previous);
    return report;
  }

  private retire(set: EngineSet): void {
    const entry = {
      set,
      timer: setTimeout(() => {
        this.retiring.delete(entry);
        void set.close();
      }, this.options.retireAfterMs ?? 60_000).unref(),
    };
    this.retiring.add(entry);
  }

  async close(): Promise<void> {
    await this.loading?.catch(() => undefined);
    for (const entry of this.retiring) clearTimeout(entry.timer);
    await Promise.allSettled([...[...this.retiring].map((e) => e.set.close()), this.set?.close()]);
    this.retiring.clear();
    this.set = undefined;
  }
}
