/**
 * Finds the model packs in the models dir. Each subfolder (symlinks followed) is one pack,
 * recognised by its files as the upstream sherpa-onnx release archives unpack, or described by a
 * `pack.json` ({kind, files: {role: relPath}, languages?, voices?, sha256?: {relPath: hex}}), which
 * wins over detection. `.parley-pack.json` (written by `parley models pull`) adds the catalogue id,
 * languages, voices and checksums to whatever detection found.
 *
 * Nothing here loads a model: detection only reads file names and ONNX metadata. Folders starting
 * with "." (the pull's partial downloads and unpack folders) are ignored; a folder that is not
 * recognised becomes a problem, never an exception.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { PackFolder, readMetadata, type Detection } from './families/family.js';
import { familyOf, isPackKind, modelFamilies, packKinds, type PackKind } from './families/index.js';
import type { ModelPack, PackVoice } from './model-pack.js';

export interface ScanProblem {
  id: string;
  dir: string;
  reason: string;
}

export interface ScanResult {
  packs: ModelPack[];
  problems: ScanProblem[];
}

/** What `parley models pull` writes next to the unpacked files. */
export const PULL_RECORD_FILE = '.parley-pack.json';
export const PACK_JSON_FILE = 'pack.json';

export interface PullRecord {
  catalogueId: string;
  /** sha256 of the downloaded archive (or single file), as received. */
  archiveSha256: string;
  url?: string;
  installedAt?: string;
  kind?: PackKind;
  languages?: string[];
  voices?: PackVoice[];
  /** Expected sha256 of files inside the pack, by path relative to it. */
  sha256?: Record<string, string>;
}

export interface PackJson {
  kind: PackKind;
  files: Record<string, string>;
  languages?: string[];
  voices?: PackVoice[];
  sha256?: Record<string, string>;
  catalogueId?: string;
}

export { languageCode, WHISPER_LANGUAGES } from './families/languages.js';

/** Names of partial downloads and editor/OS leftovers that are never packs. */
function ignoredName(name: string): boolean {
  return name.startsWith('.') || /\.(partial|download|tmp|part|crdownload)$/i.test(name) || name === 'lost+found';
}

interface FolderListing {
  /** Top-level file names. */
  files: string[];
  /** Top-level folder names. */
  dirs: string[];
}

async function listFolder(dir: string): Promise<FolderListing> {
  const files: string[] = [];
  const dirs: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.') && entry.name !== PULL_RECORD_FILE) continue;
    let isDir = entry.isDirectory();
    let isFile = entry.isFile();
    if (entry.isSymbolicLink()) {
      try {
        const s = await stat(path.join(dir, entry.name));
        isDir = s.isDirectory();
        isFile = s.isFile();
      } catch {
        continue; // dangling link
      }
    }
    if (isDir) dirs.push(entry.name);
    else if (isFile) files.push(entry.name);
  }
  return { files: files.sort(), dirs: dirs.sort() };
}

/** The first family that recognises the folder, else why no family does. */
function detectFolder(id: string, dir: string, listing: FolderListing): Detection {
  const folder = new PackFolder(id, dir, listing.files, listing.dirs);
  for (const family of modelFamilies()) {
    const detected = family.detect(folder);
    if (detected) return detected;
  }
  const { model, error } = folder.single;
  if (!model) return { problem: 'no .onnx model file found' };
  if (error) return { problem: `${model} is not a readable ONNX model: ${error}` };
  if (folder.tokens) return { problem: `model ${model} with tokens.txt, but its kind could not be told from the folder name or metadata (add a pack.json)` };
  return { problem: `${model} is not a model Parley recognises (add a pack.json naming its kind)` };
}

function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}

function packFromJson(id: string, dir: string, json: PackJson): ModelPack {
  if (!json || typeof json !== 'object') throw new Error('pack.json is not an object');
  if (!isPackKind(json.kind)) throw new Error(`pack.json kind "${String(json.kind)}" is not one of ${packKinds().join(', ')}`);
  if (!json.files || typeof json.files !== 'object') throw new Error('pack.json has no "files" object');
  const files: Record<string, string> = {};
  for (const [role, rel] of Object.entries(json.files)) {
    if (typeof rel !== 'string' || !rel) throw new Error(`pack.json file for role "${role}" is not a path`);
    // Comma-separated lexicons stay comma-separated.
    files[role] = rel
      .split(',')
      .map((p) => path.resolve(dir, p.trim()))
      .join(',');
  }
  const pack: ModelPack = {
    id,
    dir,
    kind: json.kind,
    files,
    languages: Array.isArray(json.languages) ? json.languages.map(String) : [],
    voices: Array.isArray(json.voices) ? json.voices : [],
    metadata: {},
  };
  if (json.sha256 && typeof json.sha256 === 'object') pack.sha256 = { ...json.sha256 };
  if (json.catalogueId) pack.catalogueId = json.catalogueId;
  return pack;
}

/** The ONNX file whose metadata describes the pack. */
export function mainModelFile(pack: ModelPack): string | undefined {
  const f = pack.files;
  return f.model ?? f.encoder ?? f.acousticModel;
}

/** Scans one folder; a problem string instead of a pack when it is not recognised. */
export async function detectPack(id: string, dir: string): Promise<ModelPack | { problem: string }> {
  const listing = await listFolder(dir);
  let pack: ModelPack;
  const packJson = path.join(dir, PACK_JSON_FILE);
  if (existsSync(packJson)) {
    try {
      pack = packFromJson(id, dir, readJson<PackJson>(packJson));
    } catch (error) {
      return { problem: `invalid ${PACK_JSON_FILE}: ${error instanceof Error ? error.message : String(error)}` };
    }
    if (pack.languages.length === 0) {
      const detected = detectFolder(id, dir, listing);
      if ('kind' in detected && detected.kind === pack.kind) pack.languages = detected.languages;
    }
  } else {
    const detected = detectFolder(id, dir, listing);
    if ('problem' in detected) return detected;
    pack = { id, dir, kind: detected.kind, files: detected.files, languages: detected.languages, voices: [], metadata: {} };
    if (detected.hotwords !== undefined) pack.hotwords = detected.hotwords;
  }

  const record = path.join(dir, PULL_RECORD_FILE);
  if (existsSync(record)) {
    try {
      const r = readJson<PullRecord>(record);
      if (r.catalogueId) pack.catalogueId = r.catalogueId;
      // Detection knows the languages from the files (a Whisper pack: every one it speaks); the
      // record's list only fills in when detection found none.
      if (Array.isArray(r.languages) && r.languages.length > 0 && pack.languages.length === 0) pack.languages = r.languages;
      if (Array.isArray(r.voices) && r.voices.length > 0 && pack.voices.length === 0) pack.voices = r.voices;
      if (r.sha256 && Object.keys(r.sha256).length > 0) pack.sha256 = { ...r.sha256, ...pack.sha256 };
    } catch {
      // A damaged record only loses the extras; the pack itself is still what its files say.
    }
  }

  const main = mainModelFile(pack);
  if (main && existsSync(main)) {
    pack.metadata = readMetadata(main).metadata;
    if (pack.languages.length === 0) pack.languages = familyOf(pack.kind).languagesFromMetadata?.(pack.metadata) ?? [];
  }
  return pack;
}

export async function scanModelPacks(modelsDir: string): Promise<ScanResult> {
  const packs: ModelPack[] = [];
  const problems: ScanProblem[] = [];
  let entries: string[];
  try {
    entries = (await readdir(modelsDir)).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { packs, problems };
    throw error;
  }
  for (const name of entries) {
    if (ignoredName(name)) continue;
    const dir = path.resolve(modelsDir, name);
    let isDir = false;
    try {
      isDir = statSync(dir).isDirectory();
    } catch {
      problems.push({ id: name, dir, reason: 'broken symlink or unreadable entry' });
      continue;
    }
    if (!isDir) {
      if (name.toLowerCase().endsWith('.onnx') || /\.tar\.(bz2|gz)$|\.tgz$|\.zip$/i.test(name)) {
        problems.push({ id: name, dir, reason: 'a loose file, not a pack folder: put it in a folder of its own (or use `parley models pull`)' });
      }
      continue;
    }
    try {
      const result = await detectPack(name, dir);
      if ('problem' in result) problems.push({ id: name, dir, reason: result.problem });
      else packs.push(result);
    } catch (error) {
      problems.push({ id: name, dir, reason: error instanceof Error ? error.message : String(error) });
    }
  }
  return { packs, problems };
}
