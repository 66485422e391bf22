/**
 * Which pack a transcription needs that this server does not have, and what to tell the user: the
 * one answer every path gives (REST of each family, webhook jobs, URL uploads, sockets, Wyoming,
 * the playground), so they all name the same pack and the same command.
 *
 * Transcription needs a voice activity detector and at least one speech recogniser. What to
 * install comes from the catalogue: the default VAD, and for a language the recommended preset's
 * recogniser that lists it, else the preset's language-detecting one.
 */
import { PackNotInstalledError } from '../errors.js';
import { listCatalogue, recommendedPreset, type CatalogueEntry } from './catalogue.js';

/** A loaded pack as the models report lists it. */
export interface LoadedPack {
  id: string;
  kind: string;
  languages: string[];
}

/** The VAD pack a first start installs, and the one to name when none is loaded. */
export const DEFAULT_VAD_PACK = 'silero-vad';

export type MissingRole = 'vad' | 'recognizer';

export interface MissingPack {
  role: MissingRole;
  /** The catalogue pack that provides it; undefined when the catalogue has none for the language. */
  pack: string | undefined;
}

/** The admin route that installs a catalogue pack over HTTP (Server-Sent Events of its progress). */
export function installRoute(pack: string): string {
  return `POST /api/v1/admin/models/${pack}/install`;
}

const isVad = (p: Pick<LoadedPack, 'kind'>) => p.kind.startsWith('vad-');
const isRecognizer = (p: Pick<LoadedPack, 'kind'>) => p.kind.startsWith('asr-');

/**
 * The catalogue's recogniser for `language`: the first of the recommended preset that lists the
 * language, else the preset's first that detects languages ("multi"), else the first catalogue
 * recogniser that lists it.
 */
export function recommendedRecognizer(language: string, catalogue: CatalogueEntry[] = listCatalogue(), preset: string[] = recommendedPreset()): CatalogueEntry | undefined {
  const recognizers = catalogue.filter(isRecognizer);
  const recommended = preset.flatMap((id) => recognizers.filter((e) => e.id === id));
  return (
    recommended.find((e) => e.languages.includes(language)) ??
    recommended.find((e) => e.languages.includes('multi')) ??
    recognizers.find((e) => e.languages.includes(language))
  );
}

/** What transcription needs that is there: a VAD, and how many recognisers. */
export interface TranscriptionPacks {
  vad: boolean;
  recognizers: number;
}

/** The loaded packs (the models report) as what transcription needs. */
export function transcriptionPacksOf(loaded: Array<Pick<LoadedPack, 'kind'>>): TranscriptionPacks {
  return { vad: loaded.some(isVad), recognizers: loaded.filter(isRecognizer).length };
}

/**
 * What a transcription in `language` lacks: the VAD and/or any recogniser at all. A recogniser
 * for another language than the one asked is not reported here: which language codes a
 * recogniser serves is the language plan's question.
 */
export function missingTranscriptionPacks(installed: TranscriptionPacks, language: string, catalogue: CatalogueEntry[] = listCatalogue()): MissingPack[] {
  const missing: MissingPack[] = [];
  if (installed.recognizers === 0) missing.push({ role: 'recognizer', pack: recommendedRecognizer(language, catalogue)?.id });
  if (!installed.vad) missing.push({ role: 'vad', pack: catalogue.some((e) => e.id === DEFAULT_VAD_PACK) ? DEFAULT_VAD_PACK : undefined });
  return missing;
}

const WHAT: Record<MissingRole, string> = {
  vad: 'no voice activity detection (VAD) model is installed',
  recognizer: 'no speech recognition model is installed',
};

/**
 * The sentence for what is missing: what, then the command and the admin route that install it.
 * `feature` is what cannot work without it (voice cloning needs the VAD too).
 * "Transcription is unavailable: no speech recognition model is installed. Install one with
 * `parley models pull X` (or, with an admin key, POST /api/v1/admin/models/X/install)."
 */
export function missingPacksMessage(missing: readonly MissingPack[], feature = 'Transcription'): string {
  const what = missing.map((m) => WHAT[m.role]).join(' and ');
  const packs = missing.flatMap((m) => (m.pack ? [m.pack] : []));
  const install =
    packs.length === 0
      ? 'Install a recogniser pack (parley models list shows the catalogue).'
      : `Install ${packs.length === 1 ? 'it' : 'them'} with \`parley models pull ${packs.join(' ')}\` (or, with an admin key, ${packs.map(installRoute).join(' and ')}).`;
  return `${feature} is unavailable: ${what}. ${install}`;
}

/** Throws PackNotInstalledError naming everything missing; returns when all is there. */
export function requireTranscriptionPacks(installed: TranscriptionPacks, language: string, catalogue?: CatalogueEntry[]): void {
  const missing = missingTranscriptionPacks(installed, language, catalogue);
  if (missing.length) throw new PackNotInstalledError(missingPacksMessage(missing), missing);
}

/**
 * The same in a WebSocket close frame, which holds at most 123 bytes: what is missing and the
 * command. "no speech recogniser installed; run: parley models pull X"
 */
export function missingPacksCloseReason(missing: readonly MissingPack[]): string {
  const what = missing.map((m) => (m.role === 'vad' ? 'no VAD' : 'no speech recogniser')).join(' and ');
  const packs = missing.flatMap((m) => (m.pack ? [m.pack] : []));
  return packs.length ? `${what} installed; run: parley models pull ${packs.join(' ')}` : `${what} installed`;
}
