/**
 * What `parley serve` installs on its own so that a fresh install transcribes (config.models):
 *
 *  - the default VAD (silero-vad) whenever no VAD is installed: it is small (3.9 MB download) and
 *    every transcription needs it;
 *  - once, the catalogue's recommended recogniser for models.autoPullLanguage, when no recogniser
 *    is installed. The attempt is remembered in the data dir (first-run.json) as soon as the host
 *    answered, whatever came of it: a recogniser the operator removed is not pulled back. A host
 *    that cannot be reached at all (offline) is not an attempt: the next start tries again.
 *
 * Each pack goes through the admin install (download, checksums, unpack, test load in a child
 * process), then the models are reloaded. It runs in the background: the server serves speech
 * meanwhile, and a transcription asked for before the packs are in gets the missing-pack answer.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { CatalogueEntry } from './catalogue.js';
import type { ModelsReport } from './installed-models.js';
import { DEFAULT_VAD_PACK, missingPacksMessage, missingTranscriptionPacks, recommendedRecognizer, transcriptionPacksOf, type MissingPack } from './missing-packs.js';
import type { InstalledPack, PackAdmin } from './pack-admin.js';
import { PullError } from './pull.js';

export interface FirstRunOptions {
  dataDir: string;
  modelsDir: string;
  /** config.models.autoPullLanguage */
  language: string;
  catalogue(): CatalogueEntry[];
  packs: Pick<PackAdmin, 'install'>;
  models: { report(): ModelsReport; reload(): Promise<ModelsReport> };
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/** What /readyz shows of the first-run installs. */
export interface FirstRunReport {
  state: 'waiting' | 'installing' | 'done' | 'offline';
  /** The pack being installed, with the bytes received so far. */
  installing?: { pack: string; received: number; total?: number };
  installed: string[];
  failed: Array<{ pack: string; reason: string }>;
  /** One sentence for an operator: offline, or what transcription still lacks. */
  note?: string;
}

/** The file in the data dir that remembers the recogniser was tried. */
export const FIRST_RUN_FILE = 'first-run.json';

interface FirstRunRecord {
  recognizer?: { pack: string; triedAt: string; outcome: string };
}

/** Progress is logged at every tenth of the download. */
const PROGRESS_STEPS = 10;

export class FirstRun {
  private readonly state: FirstRunReport = { state: 'waiting', installed: [], failed: [] };
  private readonly abort = new AbortController();
  private running: Promise<void> | undefined;

  constructor(private readonly options: FirstRunOptions) {}

  report(): FirstRunReport {
    return { ...this.state, installed: [...this.state.installed], failed: [...this.state.failed] };
  }

  /** Starts the installs in the background; `done()` settles when they end. */
  start(): void {
    this.running ??= this.run().catch((err: unknown) => {
      this.state.state = 'done';
      this.options.log.warn({ err }, 'first-run install failed');
    });
  }

  done(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  /** Stops a download in progress (the server is closing); its partial file stays for the next start. */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.done();
  }

  private async run(): Promise<void> {
    const { options } = this;
    const catalogue = options.catalogue();
    const wanted = this.wanted(catalogue);
    if (wanted.length === 0) {
      this.finish();
      return;
    }
    this.state.state = 'installing';
    let installedAny = false;
    for (const { pack, role } of wanted) {
      if (this.abort.signal.aborted) return;
      const outcome = await this.install(pack);
      if (outcome === 'aborted') return;
      if (outcome === 'offline') {
        // What did install (the VAD comes from the npm registry, often reachable when the recogniser's host is not) is served at once.
        if (installedAny) await options.models.reload();
        this.state.state = 'offline';
        this.state.note = `Offline: the download of ${pack} could not reach its host. ${missingPacksMessage(this.missing())}`;
        options.log.warn({ pack }, this.state.note);
        return;
      }
      if (role === 'recognizer') await this.remember(pack, outcome);
      if (outcome === 'installed') installedAny = true;
    }
    await options.models.reload();
    this.finish();
  }

  /** What to install: the VAD when none is there, the recogniser when none is there and it was never tried. */
  private wanted(catalogue: CatalogueEntry[]): Array<{ pack: string; role: MissingPack['role'] }> {
    const { options } = this;
    const installed = transcriptionPacksOf(options.models.report().loaded);
    const wanted: Array<{ pack: string; role: MissingPack['role'] }> = [];
    // A folder already there (a pack that failed its test load) is the operator's to fix, not to overwrite.
    const absent = (pack: string) => !existsSync(path.join(options.modelsDir, pack));
    if (!installed.vad && catalogue.some((e) => e.id === DEFAULT_VAD_PACK) && absent(DEFAULT_VAD_PACK)) wanted.push({ pack: DEFAULT_VAD_PACK, role: 'vad' });
    const recognizer = recommendedRecognizer(options.language, catalogue);
    if (installed.recognizers === 0 && recognizer && absent(recognizer.id)) {
      const tried = this.record().recognizer;
      if (tried) options.log.info({ pack: tried.pack, triedAt: tried.triedAt, outcome: tried.outcome }, 'no recogniser installed; the first start already tried to install one (remove first-run.json from the data dir to try again)');
      else wanted.push({ pack: recognizer.id, role: 'recognizer' });
    }
    return wanted;
  }

  /** 'installed', 'offline' (the host could not be reached), 'aborted' (the server is closing), or what went wrong. */
  private async install(pack: string): Promise<string> {
    const { log, packs } = this.options;
    log.info({ pack }, `installing ${pack} (first start; models.autoPull=false turns this off)`);
    let logged = -1;
    try {
      const result: InstalledPack = await packs.install(
        pack,
        (received, total) => {
          this.state.installing = { pack, received, ...(total !== undefined ? { total } : {}) };
          const step = total ? Math.floor((received / total) * PROGRESS_STEPS) : -1;
          if (total && step > logged) {
            logged = step;
            log.info({ pack, received, total }, `${pack}: ${step * PROGRESS_STEPS}% of ${(total / 1e6).toFixed(1)} MB`);
          }
        },
        this.abort.signal,
      );
      delete this.state.installing;
      if (!result.usable) {
        this.state.failed.push({ pack, reason: result.reason ?? 'not usable' });
        log.warn({ pack, reason: result.reason }, `${pack} was downloaded but is not usable`);
        return `not usable: ${result.reason ?? ''}`.trim();
      }
      this.state.installed.push(pack);
      log.info({ pack, bytes: result.bytes }, `${pack} installed`);
      return 'installed';
    } catch (err) {
      delete this.state.installing;
      if (this.abort.signal.aborted) return 'aborted';
      if (err instanceof PullError && err.unreachable) return 'offline';
      const reason = (err as Error).message;
      this.state.failed.push({ pack, reason });
      log.warn({ pack, reason }, `${pack} could not be installed`);
      return `failed: ${reason}`;
    }
  }

  private missing(): MissingPack[] {
    return missingTranscriptionPacks(transcriptionPacksOf(this.options.models.report().loaded), this.options.language, this.options.catalogue());
  }

  /** Done: says what transcription still lacks, if anything. */
  private finish(): void {
    this.state.state = 'done';
    const missing = this.missing();
    if (missing.length) {
      this.state.note = missingPacksMessage(missing);
      this.options.log.warn({}, this.state.note);
    }
  }

  private record(): FirstRunRecord {
    try {
      return JSON.parse(readFileSync(path.join(this.options.dataDir, FIRST_RUN_FILE), 'utf8')) as FirstRunRecord;
    } catch {
      return {};
    }
  }

  private async remember(pack: string, outcome: string): Promise<void> {
    const record: FirstRunRecord = { ...this.record(), recognizer: { pack, triedAt: new Date().toISOString(), outcome } };
    await mkdir(this.options.dataDir, { recursive: true });
    await writeFile(path.join(this.options.dataDir, FIRST_RUN_FILE), `${JSON.stringify(record, null, 2)}\n`);
  }
}
