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
import { readOnnxMetadataSync } from './onnx-metadata.js';
import { packKinds, type ModelPack, type PackKind, type PackVoice } from '../engines/model-pack.js';

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

/** Whisper's languages (ISO 639-1 where one exists), the order of its tokenizer. */
export const WHISPER_LANGUAGES = [
  'en', 'zh', 'de', 'es', 'ru', 'ko', 'fr', 'ja', 'pt', 'tr', 'pl', 'ca', 'nl', 'ar', 'sv', 'it', 'id', 'hi', 'fi', 'vi',
  'he', 'uk', 'el', 'ms', 'cs', 'ro', 'da', 'hu', 'ta', 'no', 'th', 'ur', 'hr', 'bg', 'lt', 'la', 'mi', 'ml', 'cy', 'sk',
  'te', 'fa', 'lv', 'bn', 'sr', 'az', 'sl', 'kn', 'et', 'mk', 'br', 'eu', 'is', 'hy', 'ne', 'mn', 'bs', 'kk', 'sq', 'sw',
  'gl', 'mr', 'pa', 'si', 'km', 'sn', 'yo', 'so', 'af', 'oc', 'ka', 'be', 'tg', 'sd', 'gu', 'am', 'yi', 'lo', 'uz', 'fo',
  'ht', 'ps', 'tk', 'nn', 'mt', 'sa', 'lb', 'my', 'bo', 'tl', 'mg', 'as', 'tt', 'haw', 'ln', 'ha', 'ba', 'jv', 'su',
];

/** English language names (Piper's `language` metadata) → ISO 639-1. */
const LANGUAGE_NAMES: Record<string, string> = {
  english: 'en', spanish: 'es', french: 'fr', german: 'de', italian: 'it', dutch: 'nl', polish: 'pl', russian: 'ru',
  swedish: 'sv', arabic: 'ar', malayalam: 'ml', telugu: 'te', hindi: 'hi', portuguese: 'pt', chinese: 'zh',
  japanese: 'ja', korean: 'ko', turkish: 'tr', ukrainian: 'uk', czech: 'cs', danish: 'da', finnish: 'fi', greek: 'el',
  hungarian: 'hu', icelandic: 'is', norwegian: 'no', romanian: 'ro', slovak: 'sk', slovenian: 'sl', serbian: 'sr',
  swahili: 'sw', vietnamese: 'vi', catalan: 'ca', welsh: 'cy', persian: 'fa', farsi: 'fa', georgian: 'ka',
  kazakh: 'kk', luxembourgish: 'lb', latvian: 'lv', nepali: 'ne', indonesian: 'id', bengali: 'bn', tamil: 'ta',
  marathi: 'mr', gujarati: 'gu', kannada: 'kn', punjabi: 'pa', urdu: 'ur', hebrew: 'he', bulgarian: 'bg',
  croatian: 'hr', lithuanian: 'lt', estonian: 'et', albanian: 'sq', macedonian: 'mk', thai: 'th', malay: 'ms',
};

/** "English", "en-us", "en_US", "es" → "en"/"es"; undefined when unknown. */
export function languageCode(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const v = value.trim().toLowerCase();
  const named = LANGUAGE_NAMES[v] ?? LANGUAGE_NAMES[v.split(/[\s(]/)[0] ?? ''];
  if (named) return named;
  const m = /^([a-z]{2,3})(?:[-_][a-z0-9]+)*$/.exec(v);
  return m ? m[1] : undefined;
}

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

const isOnnx = (name: string) => name.toLowerCase().endsWith('.onnx');
const isInt8 = (name: string) => /[._-]int8[._-]/i.test(name) || /int8\.onnx$/i.test(name);

/**
 * The preferred file among candidates: int8 when both exist, then the plainest name (fewest
 * extra words), then alphabetical.
 */
function pickPreferred(candidates: string[], preferInt8 = true): string | undefined {
  if (candidates.length === 0) return undefined;
  const score = (name: string) => {
    let s = 0;
    if (preferInt8 && isInt8(name)) s -= 1000;
    if (/no-metadata|fp16|\.bak|test/i.test(name)) s += 500;
    return s + name.length;
  };
  return [...candidates].sort((a, b) => score(a) - score(b) || a.localeCompare(b))[0];
}

function readMetadata(file: string | undefined): { metadata: Record<string, string>; error?: string } {
  if (!file) return { metadata: {} };
  try {
    return { metadata: readOnnxMetadataSync(file) };
  } catch (error) {
    return { metadata: {}, error: error instanceof Error ? error.message : String(error) };
  }
}

interface Detected {
  kind: PackKind;
  files: Record<string, string>;
  languages: string[];
  /** The main ONNX file, whose metadata is recorded. */
  main?: string;
}

type Detection = Detected | { problem: string };

/** Languages named in a folder name like "...-zh-en-...", "...-en-..." or a Piper "xx_YY". */
function languagesFromName(id: string): string[] {
  const lower = id.toLowerCase();
  const piper = /(?:^|[-_])([a-z]{2,3})_([A-Z]{2})(?:[-_.]|$)/.exec(id);
  if (piper) return [piper[1]!];
  const found: string[] = [];
  const known = new Set(['en', 'zh', 'ja', 'ko', 'yue', 'de', 'fr', 'es', 'ru', 'it', 'pt', 'nl', 'pl', 'ar', 'hi', 'vi', 'th', 'sv', 'uk', 'tr']);
  for (const part of lower.split(/[-_.]/)) if (known.has(part) && !found.includes(part)) found.push(part);
  if (found.length === 0 && /gigaspeech|librispeech|ljspeech|libritts|giga/.test(lower)) found.push('en');
  return found;
}

/**
 * Kokoro's lexicons and rule FSTs, comma-joined as sherpa takes them and in upstream's order
 * (sherpa-onnx scripts/kokoro): the first lexicon that knows a word wins, so American voices use
 * `lexicon-us-en.txt,lexicon-zh.txt` and British voices `lexicon-gb-en.txt,lexicon-zh.txt`
 * (role lexiconGb); the FSTs normalise Chinese phone numbers, dates and numbers.
 */
function kokoroTextFiles(names: string[], abs: (name: string) => string): Record<string, string> {
  const present = (...candidates: string[]) => candidates.filter((n) => names.includes(n)).map(abs);
  const lexicons = names.filter((n) => /^lexicon.*\.txt$/i.test(n));
  const others = lexicons.filter((n) => !['lexicon-us-en.txt', 'lexicon-gb-en.txt', 'lexicon-zh.txt'].includes(n)).map(abs);
  const out: Record<string, string> = {};
  const us = [...present('lexicon-us-en.txt'), ...others, ...present('lexicon-zh.txt')];
  const gb = present('lexicon-gb-en.txt');
  // Without a US lexicon the British one serves everyone rather than nobody.
  const main = us.some((f) => !f.endsWith('lexicon-zh.txt')) || gb.length === 0 ? us : [...gb, ...present('lexicon-zh.txt')];
  if (main.length > 0) out.lexicon = main.join(',');
  if (gb.length > 0 && main[0] !== gb[0]) out.lexiconGb = [...gb, ...present('lexicon-zh.txt')].join(',');
  const fsts = present('phone-zh.fst', 'date-zh.fst', 'number-zh.fst');
  if (fsts.length > 0) out.ruleFsts = fsts.join(',');
  return out;
}

function detectFolder(id: string, dir: string, listing: FolderListing): Detection {
  const { files: names, dirs } = listing;
  const lower = id.toLowerCase();
  const onnx = names.filter(isOnnx);
  const abs = (name: string) => path.join(dir, name);
  const tokens = names.includes('tokens.txt') ? 'tokens.txt' : undefined;
  const dataDir: Record<string, string> = dirs.includes('espeak-ng-data') ? { dataDir: abs('espeak-ng-data') } : {};
  const bpeVocab: Record<string, string> = names.includes('bpe.vocab') ? { bpeVocab: abs('bpe.vocab') } : {};

  // Audio tagging: a model and AudioSet's class list.
  if (names.includes('class_labels_indices.csv')) {
    const model = pickPreferred(onnx);
    if (!model) return { problem: 'class_labels_indices.csv but no .onnx model (audio tagging pack?)' };
    return { kind: 'audio-tagging', files: { model: abs(model), labels: abs('class_labels_indices.csv') }, languages: [], main: abs(model) };
  }

  // Silero VAD.
  const silero = pickPreferred(onnx.filter((n) => /silero.*vad|vad.*silero/i.test(n)), false);
  if (silero) return { kind: 'vad-silero', files: { model: abs(silero) }, languages: [], main: abs(silero) };

  // Whisper: <size>-encoder(.int8).onnx, <size>-decoder(.int8).onnx, <size>-tokens.txt.
  const whisperEncoders = onnx.filter((n) => /-encoder(\.int8)?\.onnx$/i.test(n));
  const whisperTokens = names.filter((n) => /-tokens\.txt$/i.test(n));
  if (whisperEncoders.length > 0 && whisperTokens.length > 0) {
    const encoder = pickPreferred(whisperEncoders)!;
    const prefix = encoder.replace(/-encoder(\.int8)?\.onnx$/i, '');
    const decoder = pickPreferred(onnx.filter((n) => n.startsWith(`${prefix}-decoder`)));
    const tok = whisperTokens.find((n) => n.startsWith(`${prefix}-`)) ?? whisperTokens[0]!;
    if (!decoder) return { problem: `Whisper encoder ${encoder} without a matching ${prefix}-decoder*.onnx` };
    const englishOnly = /\.en$/i.test(prefix) || /whisper-[a-z0-9]+\.en(\b|$)/i.test(lower) || /distil.*\.en/i.test(lower);
    return {
      kind: 'asr-whisper',
      files: { encoder: abs(encoder), decoder: abs(decoder), tokens: abs(tok) },
      languages: englishOnly ? ['en'] : ['multi', ...WHISPER_LANGUAGES],
      main: abs(encoder),
    };
  }

  // Moonshine: preprocess, encode, uncached_decode, cached_decode.
  const pre = pickPreferred(onnx.filter((n) => /^preprocess/i.test(n)));
  if (pre) {
    const encode = pickPreferred(onnx.filter((n) => /^encode[._]/i.test(n)));
    const uncached = pickPreferred(onnx.filter((n) => /^uncached_decode/i.test(n)));
    const cached = pickPreferred(onnx.filter((n) => /^cached_decode/i.test(n)));
    if (!encode || !uncached || !cached || !tokens) {
      return { problem: 'Moonshine pack needs preprocess, encode, uncached_decode, cached_decode .onnx files and tokens.txt' };
    }
    const langs = languagesFromName(id);
    return {
      kind: 'asr-moonshine',
      files: { preprocessor: abs(pre), encoder: abs(encode), uncachedDecoder: abs(uncached), cachedDecoder: abs(cached), tokens: abs(tokens) },
      languages: langs.length > 0 ? langs : ['en'],
      main: abs(encode),
    };
  }

  // Transducers: encoder, decoder, joiner.
  const encoders = onnx.filter((n) => /^encoder/i.test(n));
  const joiners = onnx.filter((n) => /^joiner/i.test(n));
  if (encoders.length > 0 && joiners.length > 0) {
    const encoder = pickPreferred(encoders)!;
    const decoder = pickPreferred(onnx.filter((n) => /^decoder/i.test(n)));
    const joiner = pickPreferred(joiners)!;
    if (!decoder || !tokens) return { problem: 'transducer pack needs encoder, decoder and joiner .onnx files and tokens.txt' };
    const { metadata } = readMetadata(abs(encoder));
    const files: Record<string, string> = { encoder: abs(encoder), decoder: abs(decoder), joiner: abs(joiner), tokens: abs(tokens), ...bpeVocab };
    const nemo = /nemo|parakeet|canary/i.test(lower) || /^EncDec/i.test(metadata.model_type ?? '');
    let languages = languagesFromName(id);
    if (nemo) {
      if (/parakeet-tdt-0\.6b-v3/i.test(lower)) languages = ['multi'];
      if (languages.length === 0) languages = ['en'];
      return { kind: 'asr-nemo-transducer', files, languages, main: abs(encoder) };
    }
    const online =
      /streaming|kws|online/i.test(lower) || /chunk/i.test(encoder) || 'decode_chunk_len' in metadata || /streaming/i.test(metadata.comment ?? '');
    return { kind: online ? 'asr-online-transducer' : 'asr-offline-transducer', files, languages, main: abs(encoder) };
  }

  // Kokoro / Kitten: model + voices.bin + tokens.
  if (names.includes('voices.bin')) {
    const model = pickPreferred(onnx.filter((n) => !/^(preprocess|encoder|decoder)/i.test(n)));
    if (!model || !tokens) return { problem: 'voices.bin without a model .onnx and tokens.txt (Kokoro/Kitten pack?)' };
    const kitten = /kitten/i.test(lower);
    const lexicons = names.filter((n) => /^lexicon.*\.txt$/i.test(n));
    const files: Record<string, string> = { model: abs(model), voices: abs('voices.bin'), tokens: abs(tokens), ...dataDir };
    if (!kitten) Object.assign(files, kokoroTextFiles(names, abs));
    // Multilingual Kokoro's jieba dictionary (Chinese); recorded for adapters that pass it on.
    if (!kitten && dirs.includes('dict')) files.dictDir = abs('dict');
    const { metadata } = readMetadata(abs(model));
    let languages = languagesFromName(id).filter((l) => l !== 'multi');
    if (kitten) languages = ['en'];
    else if (/multi-lang|multi/i.test(lower) || lexicons.some((l) => /zh/i.test(l))) languages = ['en', 'zh'];
    else if (languages.length === 0) languages = [languageCode(metadata.language) ?? 'en'];
    return { kind: kitten ? 'tts-kitten' : 'tts-kokoro', files, languages, main: abs(model) };
  }

  // Matcha: acoustic model (model-steps-N.onnx) + a vocoder.
  const acoustic = pickPreferred(onnx.filter((n) => /^model-steps|matcha/i.test(n) && !/vocos|hifigan|vocoder/i.test(n)));
  if (acoustic && (/matcha/i.test(lower) || /^model-steps/i.test(acoustic))) {
    const vocoder = pickPreferred(onnx.filter((n) => /vocos|hifigan|vocoder/i.test(n)));
    if (!vocoder) return { problem: `Matcha acoustic model ${acoustic} without a vocoder (vocos-*.onnx or hifigan*.onnx) in the folder` };
    if (!tokens) return { problem: 'Matcha pack without tokens.txt' };
    const files: Record<string, string> = { acousticModel: abs(acoustic), vocoder: abs(vocoder), tokens: abs(tokens), ...dataDir };
    if (names.includes('lexicon.txt')) files.lexicon = abs('lexicon.txt');
    const { metadata } = readMetadata(abs(acoustic));
    const langs = languagesFromName(id);
    return { kind: 'tts-matcha', files, languages: langs.length > 0 ? langs : [languageCode(metadata.language) ?? 'en'], main: abs(acoustic) };
  }

  // Single-model packs.
  const model = pickPreferred(onnx);
  if (!model) return { problem: 'no .onnx model file found' };
  const { metadata, error } = readMetadata(abs(model));
  const modelType = (metadata.model_type ?? '').toLowerCase();

  if (tokens) {
    const vits =
      modelType === 'vits' ||
      /piper|coqui|mms/i.test(metadata.comment ?? '') ||
      /vits|piper|mms|coqui/i.test(lower) ||
      dirs.includes('espeak-ng-data');
    if (/sense-?voice/i.test(lower) || ('lfr_window_size' in metadata && 'with_itn' in metadata)) {
      return { kind: 'asr-sense-voice', files: { model: abs(model), tokens: abs(tokens) }, languages: ['multi', 'zh', 'en', 'ja', 'ko', 'yue'], main: abs(model) };
    }
    if (/paraformer/i.test(lower)) {
      const langs = languagesFromName(id);
      return { kind: 'asr-paraformer', files: { model: abs(model), tokens: abs(tokens) }, languages: langs.length ? langs : ['zh'], main: abs(model) };
    }
    if (/nemo.*ctc|ctc.*nemo|fastconformer.*ctc|conformer.*ctc/i.test(lower) || /EncDecCTC/i.test(metadata.model_type ?? '')) {
      const langs = languagesFromName(id);
      return { kind: 'asr-nemo-ctc', files: { model: abs(model), tokens: abs(tokens) }, languages: langs.length ? langs : ['en'], main: abs(model) };
    }
    if (/zipformer.*ctc|ctc.*zipformer/i.test(lower)) {
      const langs = languagesFromName(id);
      return { kind: 'asr-zipformer-ctc', files: { model: abs(model), tokens: abs(tokens), ...bpeVocab }, languages: langs, main: abs(model) };
    }
    if (vits) {
      const files: Record<string, string> = { model: abs(model), tokens: abs(tokens), ...dataDir };
      if (names.includes('lexicon.txt') && !('dataDir' in dataDir)) files.lexicon = abs('lexicon.txt');
      const fromName = languagesFromName(id);
      const lang = languageCode(metadata.language) ?? fromName[0];
      return { kind: 'tts-vits', files, languages: lang ? [lang] : [], main: abs(model) };
    }
    if (error) return { problem: `${model} is not a readable ONNX model: ${error}` };
    return { problem: `model ${model} with tokens.txt, but its kind could not be told from the folder name or metadata (add a pack.json)` };
  }

  if (error) return { problem: `${model} is not a readable ONNX model: ${error}` };
  if (modelType.startsWith('pyannote') || /pyannote|segmentation/i.test(lower)) {
    return { kind: 'diarization-segmentation', files: { model: abs(model) }, languages: [], main: abs(model) };
  }
  if ('framework' in metadata || 'output_dim' in metadata || /speaker|wespeaker|3dspeaker|titanet|campplus|eres2net|ecapa/i.test(lower + model)) {
    return { kind: 'speaker-embedding', files: { model: abs(model) }, languages: [], main: abs(model) };
  }
  return { problem: `${model} is not a model Parley recognises (add a pack.json naming its kind)` };
}

function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}

function packFromJson(id: string, dir: string, json: PackJson): ModelPack {
  if (!json || typeof json !== 'object') throw new Error('pack.json is not an object');
  if (!packKinds.includes(json.kind)) throw new Error(`pack.json kind "${String(json.kind)}" is not one of ${packKinds.join(', ')}`);
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
    if (pack.kind === 'tts-vits' && pack.languages.length === 0) {
      const lang = languageCode(pack.metadata.language);
      if (lang) pack.languages = [lang];
    }
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
      if (isOnnx(name) || /\.tar\.(bz2|gz)$|\.tgz$|\.zip$/i.test(name)) {
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
