/**
 * The transcription language codes the API takes, and how each is served by what is installed.
 *
 * Two sets of codes:
 * - the seed's (`SEED_TRANSCRIPTION_LANGUAGES`): the neutral routes (`/api/v1/stt/...`) keep them;
 * - the product's (`PRODUCT_TRANSCRIPTION_LANGUAGES`): the `pulse` names and every `/waves/v1`
 *   route take every single-language code the service documents for batch or streaming, the
 *   regional aggregators, and `multi`.
 *
 * An aggregator (`multi-eu`, …) is automatic detection restricted to its member languages: it is
 * served by a language-detecting recogniser, and a stretch of speech detected as a language outside
 * the aggregator is decoded again in a member language (see TranscriptionLanguagePlan). `multi`
 * detects among every language the recogniser knows.
 *
 * A code that no installed recogniser can serve is refused at once (LanguageNotInstalledError),
 * naming the catalogue pack that would serve it and the command that installs it.
 */
import { listCatalogue, recommendedPreset, transcriptionLanguagesOf } from '../models/catalogue.js';
import { LanguageNotInstalledError } from '../errors.js';
import type { Recognizer } from '../engines/types.js';

/** What a detecting recogniser lists among its languages. */
export const DETECT = 'multi';

/** The seed's codes, in its order: what the neutral routes keep taking. */
export const SEED_TRANSCRIPTION_LANGUAGES = [
  'it', 'es', 'en', 'pt', 'hi', 'de', 'fr', 'uk', 'ru', 'kn', 'ml', 'pl', 'mr', 'gu', 'cs', 'sk', 'te', 'or',
  'nl', 'bn', 'lv', 'et', 'ro', 'pa', 'fi', 'sv', 'bg', 'ta', 'hu', 'da', 'lt', 'mt', 'multi',
] as const;

/**
 * The regional aggregators and their members, the main language first: a stretch detected outside
 * the members is decoded in the member the request has heard most so far, else in the main one.
 * The batch `multi-asian` leaves out Cantonese and the streaming one has it; the union is kept, as
 * Cantonese audio is better served as `yue` than forced into Mandarin. `north_indic` is the
 * streaming name of `multi-indic`; `multi-south-indic` also hears English code-switching.
 */
export const LANGUAGE_AGGREGATORS: Readonly<Record<string, readonly string[]>> = {
  'multi-eu': ['en', 'de', 'es', 'ru', 'it', 'fr', 'nl', 'pt', 'uk', 'pl', 'cs', 'sk', 'lv', 'et', 'ro', 'fi', 'sv', 'bg', 'hu', 'da', 'lt', 'mt'],
  'multi-asian': ['zh', 'yue', 'ko', 'ja', 'en'],
  'multi-indic': ['hi', 'en', 'gu', 'mr', 'bn', 'or'],
  north_indic: ['hi', 'en', 'gu', 'mr', 'bn', 'or'],
  'multi-south-indic': ['ta', 'te', 'kn', 'ml', 'en'],
};

/** Every single-language code the service documents, batch (26) and streaming (21), and the seed's. */
const SINGLE_LANGUAGES = [
  'en', 'hi', 'de', 'es', 'ru', 'it', 'fr', 'nl', 'pt', 'uk', 'pl', 'cs', 'sk', 'lv', 'et', 'ro', 'fi', 'sv', 'bg', 'hu',
  'da', 'lt', 'mt', 'zh', 'ja', 'ko', 'yue', 'gu', 'mr', 'or', 'bn', 'ta', 'te', 'kn', 'ml', 'pa',
] as const;

/** What the product names and the current layout take. */
export const PRODUCT_TRANSCRIPTION_LANGUAGES: readonly string[] = [...SINGLE_LANGUAGES, ...Object.keys(LANGUAGE_AGGREGATORS), DETECT];

export function isAggregator(language: string): boolean {
  return Object.hasOwn(LANGUAGE_AGGREGATORS, language);
}

/** Whether a code asks for detection (`multi` or an aggregator). */
export function detectsLanguage(language: string): boolean {
  return language === DETECT || isAggregator(language);
}

/**
 * How a request's language is served: the recogniser, the language it is asked to decode in
 * (`multi` for detection), and for an aggregator the languages detection may answer.
 */
export interface TranscriptionLanguagePlan {
  recognizer: Recognizer;
  /** What the recogniser is given: the code itself, or `multi` to detect. */
  recognizerLanguage: string;
  /** For an aggregator: its members this recogniser can decode, main language first. */
  allowed?: readonly string[];
}

/**
 * The recogniser and language for `language` among `recognizers`. A single code takes the first
 * recogniser that lists it; `multi` the first that detects; an aggregator the detecting recogniser
 * that decodes most of its members. Throws LanguageNotInstalledError when none can.
 */
export function planTranscriptionLanguage(recognizers: readonly Recognizer[], language: string): TranscriptionLanguagePlan {
  if (!detectsLanguage(language)) {
    const recognizer = recognizers.find((r) => r.languages.includes(language));
    if (recognizer) return { recognizer, recognizerLanguage: language };
    throw notInstalled(language);
  }
  const detecting = recognizers.filter((r) => r.languages.includes(DETECT));
  if (language === DETECT) {
    if (detecting[0]) return { recognizer: detecting[0], recognizerLanguage: DETECT };
    throw notInstalled(language);
  }
  const members = LANGUAGE_AGGREGATORS[language]!;
  let best: { recognizer: Recognizer; allowed: string[] } | undefined;
  for (const recognizer of detecting) {
    const allowed = members.filter((m) => recognizer.languages.includes(m));
    if (allowed.length > (best?.allowed.length ?? 0)) best = { recognizer, allowed };
  }
  if (best) return { recognizer: best.recognizer, recognizerLanguage: DETECT, allowed: best.allowed };
  throw notInstalled(language);
}

/**
 * The catalogue pack to pull for `language`: among the speech recognisers that serve it (detect,
 * for `multi` and aggregators, across the most members), the recommended one first.
 */
export function packForLanguage(language: string): string | undefined {
  const recommended = new Set(recommendedPreset());
  const wanted = detectsLanguage(language) ? [DETECT] : [language];
  const members = LANGUAGE_AGGREGATORS[language] ?? [];
  const candidates = listCatalogue()
    .filter((e) => e.kind.startsWith('asr-'))
    .map((e) => ({ id: e.id, languages: transcriptionLanguagesOf(e) }))
    .filter((e) => wanted.every((w) => e.languages.includes(w)))
    .map((e) => ({ id: e.id, covered: members.filter((m) => e.languages.includes(m)).length, recommended: recommended.has(e.id) }))
    .filter((e) => members.length === 0 || e.covered > 0);
  candidates.sort((a, b) => b.covered - a.covered || Number(b.recommended) - Number(a.recommended));
  return candidates[0]?.id;
}

function notInstalled(language: string): LanguageNotInstalledError {
  const pack = packForLanguage(language);
  const what =
    language === DETECT
      ? 'language multi (automatic detection) needs a language-detecting recogniser, and none is installed'
      : isAggregator(language)
        ? `language ${language} (automatic detection among ${LANGUAGE_AGGREGATORS[language]!.join(', ')}) needs a language-detecting recogniser for them, and none is installed`
        : `language ${language} has no installed speech recogniser`;
  const remedy = pack
    ? `: install one with \`parley models pull ${pack}\`, then restart the server or call POST /api/v1/admin/models/reload`
    : ': no pack in the model catalogue transcribes it; install a recogniser pack that does';
  return new LanguageNotInstalledError(what + remedy, language, pack);
}
