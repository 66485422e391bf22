import type { ModelGeneration } from '../engines/types.js';

/** `language` values each model accepts, without "auto" (which every model takes). */
export const modelLanguages: Record<ModelGeneration, readonly string[]> = Object.freeze({
  'tts-large': ['en', 'hi'],
  'tts-v2': ['en', 'hi', 'ta', 'kn', 'mr', 'bn', 'gu', 'ar', 'he', 'fr', 'de', 'pl', 'ru', 'it', 'nl', 'es', 'sv', 'ml', 'te'],
  'tts-v3.1': ['en', 'hi', 'ta', 'es'],
});

/** The primary language subtag: "en-US" → "en". */
export function baseLanguage(tag: string): string {
  return tag.toLowerCase().split(/[-_]/)[0]!;
}
