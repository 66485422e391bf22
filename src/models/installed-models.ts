/**
 * The packs the server runs on: scan the models dir, verify each pack (files, checksums, a test
 * load in a child process, so a bad pack cannot end the server), build the engines, and swap them
 * in whole. `reload()` repeats this while the server runs: unchanged packs keep their engines, new
 * or changed ones are loaded, and a replaced engine is closed when the last request using it ends.
 */
import type { AnyEnginePack, EngineBuildOptions } from '../engines/capabilities.js';
import { loadEngineSet, type EngineSet, type EngineSetOptions } from '../engines/server/engine-set.js';
import type { ModelPack } from './model-pack.js';
import { scanModelPacks } from './detect.js';
import { enginePackOf } from './families/index.js';
import { verifyPacks } from './verify.js';

export interface ModelsReport {
  /** Packs in use, by id, with their kind and languages. */
  loaded: Array<{ id: string; kind: string; languages: string[] }>;
  /** Packs found but not used, with the reason (failed verification, crashed the test load...). */
  skipped: Array<{ id: string; reason: string }>;
  /** Folders that are not recognisable packs. */
  problems: Array<{ id: string; reason: string }>;
  voices: number;
  loadedAt: string;
  /** Packs this load started (new or changed). */
  started: string[];
  /** Packs kept running from the previous load, unchanged. */
  kept: string[];
}

export interface InstalledModelsOptions extends EngineSetOptions, EngineBuildOptions {
  modelsDir: string;
  /** Where test-load verdicts are cached between starts. */
  verdictCacheDir: string;
  /** Called with each new engine set, before the old one is let go (the voice registry swap). */
  onSwap(set: EngineSet): void;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

export class InstalledModels {
  private set: EngineSet | undefined;
  private last: ModelsReport = { loaded: [], skipped: [], problems: [], voices: 0, loadedAt: new Date(0).toISOString(), started: [], kept: [] };
  private loading: Promise<ModelsReport> | undefined;

  constructor(private readonly options: InstalledModelsOptions) {}

  /**
   * The engines of the moment, held for one request: they stay open, even across a reload, until
   * the caller calls release() on the set.
   */
  acquire(): EngineSet | undefined {
    return this.set?.retain();
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
    const { engines, unbuilt } = enginePacks(verdict.usable, options);
    const set = await loadEngineSet(engines, options, this.set);
    const failed = new Set([...unbuilt, ...set.failed].map((f) => f.pack));
    const report: ModelsReport = {
      loaded: verdict.usable.filter((p) => !failed.has(p.id)).map((p) => ({ id: p.id, kind: p.kind, languages: p.languages })),
      skipped: [...verdict.skipped.map((s) => ({ id: s.pack.id, reason: s.reason })), ...[...unbuilt, ...set.failed].map((f) => ({ id: f.pack, reason: f.reason }))],
      problems: scan.problems.map((p) => ({ id: p.id, reason: p.reason })),
      voices: set.tts.reduce((n, e) => n + e.listVoices().length, 0),
      loadedAt: new Date().toISOString(),
      started: [...set.loaded],
      kept: [...set.kept],
    };
    for (const s of report.skipped) options.log.warn({ pack: s.id, reason: s.reason }, 'model pack skipped');
    for (const p of report.problems) options.log.warn({ folder: p.id, reason: p.reason }, 'not a model pack');
    options.log.info({ started: report.started, kept: report.kept, skipped: report.skipped.length }, 'model packs loaded');

    const previous = this.set;
    this.set = set;
    this.last = report;
    options.onSwap(set);
    // Engines only the previous set had close when the last request holding them ends.
    previous?.release();
    return report;
  }

  async close(): Promise<void> {
    await this.loading?.catch(() => undefined);
    this.set?.release();
    this.set = undefined;
  }
}

/** The packs as their engines take them (their families build the configs); a pack whose config cannot be built is left out with the reason. */
function enginePacks(packs: ModelPack[], options: EngineBuildOptions): { engines: AnyEnginePack[]; unbuilt: Array<{ pack: string; reason: string }> } {
  const engines: AnyEnginePack[] = [];
  const unbuilt: Array<{ pack: string; reason: string }> = [];
  for (const pack of packs) {
    try {
      engines.push(enginePackOf(pack, { espeakDataDir: options.espeakDataDir, numThreads: options.numThreads }));
    } catch (error) {
      unbuilt.push({ pack: pack.id, reason: (error as Error).message });
    }
  }
  return { engines, unbuilt };
}
