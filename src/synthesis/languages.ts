import type { ModelGeneration } from '../engines/types.js';

/** `language` values each model accepts, without "auto" (which every model takes). */
export const modelLanguages: Record<ModelGeneration, readonly string[]> = Object.freeze({
  'tts-large': ['en', 'hi'],
  'tts-v2': ['en', 'hi', 'ta', 'kn', 'mr', 'bn', 'gu', 'ar', 'he', 'fr', 'de', 'pl', 'ru', 'it', 'nl', 'es', 'sv', 'ml', 'te'],
  'tts-v3.1': ['en', 'hi', 'ta', 'es'],
});

/**
 * The service's product models, whose language rules differ from the generation that serves them:
 * more codes, and a voice that does not speak the asked language is routed rather than refused.
 */
export type ProductSpeechModel = 'lightning_v3.1' | 'lightning_v3.1_pro';

const EUROPEAN = ['en', 'es', 'fr', 'de', 'it', 'nl', 'sv', 'pt', 'pl', 'ru'];
const INDIC = ['hi', 'mr', 'gu', 'pa', 'bn', 'or', 'ta', 'te', 'kn', 'ml'];
/** The codes each product model's reference lists, without "auto". */
const DOCUMENTED: Record<ProductSpeechModel, readonly string[]> = {
  'lightning_v3.1': [...EUROPEAN, ...INDIC],
  'lightning_v3.1_pro': [...EUROPEAN, 'el', 'fi', 'no', ...INDIC, 'zh', 'ja', 'ko', 'id', 'ms', 'vi', 'tr', 'ar'],
};
/**
 * Codes the service's schema took before its documented list was narrowed ("existing codes still
 * behave identically"), and which clients still send: Pipecat maps Arabic to `ar` and Hebrew to `he`.
 */
const KEPT: Record<ProductSpeechModel, readonly string[]> = { 'lightning_v3.1': ['ar', 'he'], 'lightning_v3.1_pro': ['he'] };

/** `language` values each product model accepts, without "auto" (which both take). */
export const productModelLanguages: Record<ProductSpeechModel, readonly string[]> = Object.freeze({
  'lightning_v3.1': [...DOCUMENTED['lightning_v3.1'], ...KEPT['lightning_v3.1']],
  'lightning_v3.1_pro': [...DOCUMENTED['lightning_v3.1_pro'], ...KEPT['lightning_v3.1_pro']],
});

/** The codes the service's reference lists for a product model (without those kept for clients). */
export function documentedProductLanguages(model: ProductSpeechModel): readonly string[] {
  return DOCUMENTED[model];
}

/** What `lightning_v3.1_pro` speaks when a request names no language: English or Hindi, told apart by the text. */
export const PRO_DEFAULT_LANGUAGES: readonly string[] = Object.freeze(['en', 'hi']);

/**
 * The languages a product model's request may be detected in (besides the voice's own): every one
 * of the model's for "auto", English and Hindi when a Pro request names none, else none (an omitted
 * language on lightning_v3.1 is the voice's own).
 */
export function productDetection(product: ProductSpeechModel, language: string | undefined): readonly string[] {
  if (language === 'auto') return productModelLanguages[product];
  return language === undefined && product === 'lightning_v3.1_pro' ? PRO_DEFAULT_LANGUAGES : [];
}

/** The primary language subtag: "en-US" → "en". */
export function baseLanguage(tag: string): string {
  return tag.toLowerCase().split(/[-_]/)[0]!;
}
