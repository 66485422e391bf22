/**
 * `parley models list | pull <id…> | pull --recommended | rm <id> | verify | --help`.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { findCatalogueEntry, listCatalogue, recommendedPreset, type CatalogueEntry } from '../models/catalogue.js';
import { detectPack, scanModelPacks } from '../models/detect.js';
import { assertSafeId, checkAgainstPin, partialFile, pullPack } from '../models/pull.js';
import { removePack } from '../models/pack-admin.js';
import { verdictCacheDir, verifyPackVerdicts, type PackVerdict } from '../models/verify.js';

export interface ModelsCommandOptions {
  modelsDir: string;
  dataDir: string;
  espeakDataDir: string;
  out: NodeJS.WritableStream;
  fetchImpl?: typeof fetch;
  /** Progress and errors; default process.stderr. */
  err?: NodeJS.WritableStream;
}

const HELP = `Usage: parley models <command>

Commands:
  list                     installed packs (kind, languages, size, usable or why not)
                           and the packs the catalogue offers
  pull <id…>               download, check and install catalogue packs
  pull --recommended       the recommended set (English and multilingual voices,
                           speech recognition, VAD, diarization, audio tagging)
  pull --verify-only <id…> download each asset and check it against the size and
                           sha256 the catalogue pins, installing nothing; exit 1 on
                           a mismatch (a pack with no pin prints what it received)
  rm <id>                  remove an installed pack (a symlinked pack: only the link)
  verify                   test every installed pack now (each one loaded in a child
                           process); exit 1 if any pack is skipped or a folder is
                           not recognised
  --help                   this text

Packs live in the models dir (config modelsDir / PARLEY_MODELS_DIR), one folder each.
`;

function formatSize(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined) return '?';
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(1)} GB`;
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(1)} MB`;
  if (bytes >= 1e3) return `${(bytes / 1e3).toFixed(1)} kB`;
  return `${bytes} B`;
}

/** Bytes in a folder, following the top symlink but not links inside. */
function dirSize(dir: string): number {
  let total = 0;
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (entry.isFile()) total += statSync(p).size;
      else if (entry.isSymbolicLink()) {
        try {
          const s = statSync(p);
          if (s.isFile()) total += s.size;
        } catch {
          // dangling
        }
      }
    }
  };
  try {
    walk(dir);
  } catch {
    // unreadable: report what was counted
  }
  return total;
}

function verdictText(v: PackVerdict | undefined): string {
  if (!v) return '?';
  if (v.unverified) return 'not verified yet (parley models verify)';
  return v.usable ? 'usable' : `SKIPPED: ${v.reason ?? 'unusable'}`;
}

async function list(opts: ModelsCommandOptions): Promise<number> {
  const { out } = opts;
  const { packs, problems } = await scanModelPacks(opts.modelsDir);
  const verdicts = await verifyPackVerdicts(packs, {
    cacheDir: verdictCacheDir(opts.dataDir),
    espeakDataDir: opts.espeakDataDir,
    cacheOnly: true,
  });
  out.write(`Installed in ${path.resolve(opts.modelsDir)}:\n`);
  if (packs.length === 0 && problems.length === 0) out.write('  (none)\n');
  packs.forEach((pack, i) => {
    const langs = pack.languages.length > 0 ? pack.languages.slice(0, 6).join(',') + (pack.languages.length > 6 ? ',…' : '') : '-';
    out.write(`  ${pack.id}  ${pack.kind}  [${langs}]  ${formatSize(dirSize(pack.dir))}  ${verdictText(verdicts[i])}\n`);
  });
  for (const p of problems) out.write(`  ${p.id}  NOT A PACK: ${p.reason}\n`);

  const installed = new Set([...packs.map((p) => p.catalogueId ?? p.id), ...packs.map((p) => p.id)]);
  const available = listCatalogue().filter((e) => !installed.has(e.id));
  out.write(`\nAvailable (parley models pull <id>):\n`);
  for (const e of available) {
    out.write(`  ${e.id}  ${e.kind}  [${e.languages.join(',') || '-'}]  ${formatSize(e.size)}  for ${e.models.join(', ')}\n`);
  }
  if (available.length === 0) out.write('  (everything in the catalogue is installed)\n');
  return 0;
}

function progressPrinter(err: NodeJS.WritableStream, id: string): { update: (received: number, total: number | undefined) => void; done: () => void } {
  const tty = (err as NodeJS.WriteStream).isTTY === true;
  let lastStep = -1;
  let lastDraw = 0;
  return {
    update(received, total) {
      if (tty) {
        const now = Date.now();
        if (now - lastDraw < 100 && received !== total) return;
        lastDraw = now;
        if (total) {
          const width = 30;
          const filled = Math.min(width, Math.round((received / total) * width));
          err.write(`\r${id} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${Math.floor((received / total) * 100)}% ${formatSize(received)}/${formatSize(total)}   `);
        } else {
          err.write(`\r${id} ${formatSize(received)}   `);
        }
        return;
      }
      // Plain lines: every 10 % (or every 10 MB when the size is unknown).
      const step = total ? Math.floor((received / total) * 10) : Math.floor(received / 10e6);
      if (step === lastStep) return;
      lastStep = step;
      err.write(total ? `${id}: ${step * 10}% (${formatSize(received)} of ${formatSize(total)})\n` : `${id}: ${formatSize(received)}\n`);
    },
    done() {
      if (tty) err.write('\n');
    },
  };
}

async function pull(argv: string[], opts: ModelsCommandOptions): Promise<number> {
  const err = opts.err ?? process.stderr;
  const verifyOnly = argv.includes('--verify-only');
  const args = argv.filter((a) => a !== '--verify-only');
  const ids = args.includes('--recommended') ? [...recommendedPreset(), ...args.filter((a) => a !== '--recommended')] : args;
  if (ids.length === 0) {
    err.write('parley models pull: name at least one pack id, or --recommended (parley models list shows them)\n');
    return 2;
  }
  const entries: CatalogueEntry[] = [];
  for (const id of ids) {
    const entry = findCatalogueEntry(id);
    if (!entry) {
      err.write(`parley models pull: "${id}" is not in the catalogue (parley models list shows the available packs)\n`);
      return 2;
    }
    if (!entries.some((e) => e.id === entry.id)) entries.push(entry);
  }
  if (verifyOnly) return verifyPins(entries, opts);
  let failures = 0;
  for (const entry of entries) {
    const target = path.join(opts.modelsDir, entry.id);
    if (existsSync(target)) {
      opts.out.write(`${entry.id}: already installed\n`);
      continue;
    }
    const progress = progressPrinter(err, entry.id);
    try {
      const result = await pullPack(entry, {
        modelsDir: opts.modelsDir,
        ...(opts.fetchImpl ? { fetchImpl: opts.fetchImpl } : {}),
        onProgress: progress.update,
      });
      progress.done();
      opts.out.write(`${entry.id}: installed (${formatSize(result.bytes)}, sha256 ${result.sha256}${result.resumed ? ', resumed' : ''})\n`);
      const pack = await detectPack(entry.id, result.dir);
      if ('problem' in pack) {
        opts.out.write(`${entry.id}: WARNING: not recognised as a pack: ${pack.problem}\n`);
        failures++;
        continue;
      }
      const [verdict] = await verifyPackVerdicts([pack], { cacheDir: verdictCacheDir(opts.dataDir), espeakDataDir: opts.espeakDataDir, fresh: true });
      opts.out.write(`${entry.id}: ${verdictText(verdict)}\n`);
      if (!verdict?.usable) failures++;
    } catch (error) {
      progress.done();
      err.write(`${entry.id}: ${error instanceof Error ? error.message : String(error)}\n`);
      failures++;
    }
  }
  return failures > 0 ? 1 : 0;
}

async function verifyPins(entries: CatalogueEntry[], opts: ModelsCommandOptions): Promise<number> {
  const err = opts.err ?? process.stderr;
  let failures = 0;
  for (const entry of entries) {
    const progress = progressPrinter(err, entry.id);
    try {
      const check = await checkAgainstPin(entry, { modelsDir: opts.modelsDir, ...(opts.fetchImpl ? { fetchImpl: opts.fetchImpl } : {}), onProgress: progress.update });
      progress.done();
      const got = `${check.bytes} bytes, sha256 ${check.sha256}`;
      if (check.matches === null) opts.out.write(`${entry.id}: not pinned (the catalogue has no size or sha256 for it); received ${got}\n`);
      else if (check.matches) opts.out.write(`${entry.id}: matches its pin (${got})\n`);
      else {
        opts.out.write(`${entry.id}: MISMATCH: received ${got}; pinned ${check.pinned.size ?? '?'} bytes, sha256 ${check.pinned.sha256 ?? '?'}\n`);
        failures++;
      }
    } catch (error) {
      progress.done();
      err.write(`${entry.id}: ${error instanceof Error ? error.message : String(error)}\n`);
      failures++;
    }
  }
  return failures > 0 ? 1 : 0;
}

async function remove(args: string[], opts: ModelsCommandOptions): Promise<number> {
  const err = opts.err ?? process.stderr;
  if (args.length !== 1) {
    err.write('Usage: parley models rm <id>\n');
    return 2;
  }
  const id = args[0]!;
  try {
    assertSafeId(id);
  } catch (error) {
    err.write(`parley models rm: ${(error as Error).message}\n`);
    return 2;
  }
  let isLink = false;
  try {
    ({ linkOnly: isLink } = await removePack(opts.modelsDir, opts.dataDir, id));
  } catch (error) {
    err.write(`parley models rm: ${(error as Error).message}\n`);
    return 1;
  }
  opts.out.write(`${id}: removed${isLink ? ' (link only)' : ''}\n`);
  return 0;
}

async function verify(opts: ModelsCommandOptions): Promise<number> {
  const { out } = opts;
  const { packs, problems } = await scanModelPacks(opts.modelsDir);
  if (packs.length === 0 && problems.length === 0) {
    out.write(`No model packs in ${path.resolve(opts.modelsDir)} (parley models pull --recommended)\n`);
    return 0;
  }
  const verdicts = await verifyPackVerdicts(packs, { cacheDir: verdictCacheDir(opts.dataDir), espeakDataDir: opts.espeakDataDir, fresh: true });
  let bad = 0;
  packs.forEach((pack, i) => {
    const v = verdicts[i]!;
    if (v.usable) out.write(`ok    ${pack.id} (${pack.kind})\n`);
    else {
      bad++;
      out.write(`SKIP  ${pack.id} (${pack.kind}): ${v.reason ?? 'unusable'}\n`);
    }
  });
  for (const p of problems) {
    bad++;
    out.write(`SKIP  ${p.id}: not a pack: ${p.reason}\n`);
  }
  out.write(`${packs.length - verdicts.filter((v) => !v.usable).length} usable, ${bad} skipped\n`);
  return bad > 0 ? 1 : 0;
}

export async function runModelsCommand(argv: string[], opts: ModelsCommandOptions): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'list':
    case 'ls':
      return list(opts);
    case 'pull':
      return pull(rest, opts);
    case 'rm':
    case 'remove':
      return remove(rest, opts);
    case 'verify':
      return verify(opts);
    case undefined:
    case '-h':
    case '--help':
    case 'help':
      opts.out.write(HELP);
      return command === undefined ? 2 : 0;
    default:
      (opts.err ?? process.stderr).write(`parley models: unknown command "${command}"\n\n${HELP}`);
      return 2;
  }
}
