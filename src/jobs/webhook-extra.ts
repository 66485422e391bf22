/**
 * `webhook_extra`: comma-separated `key:value` pairs the client wants back as top-level string
 * fields of the webhook payload, so the receiver can match a delivery to its own records.
 */
import { InvalidRequestError } from '../errors.js';
import type { TranscriptionResult } from '../transcription/types.js';

/** Top-level fields of any payload: every result field, plus `error` of the failure payload. */
export const PAYLOAD_FIELDS = [
  'status',
  'request_id',
  'transcription',
  'language',
  'words',
  'utterances',
  'duration',
  'age',
  'gender',
  'emotions',
  'metadata',
  'speakers',
  'keywords_applied',
  'redacted_entities',
  'names_redacted',
  'error',
] as const;

// Compile-time guard: a field added to TranscriptionResult must be added above, or this fails to build.
type Unlisted = Exclude<keyof TranscriptionResult, (typeof PAYLOAD_FIELDS)[number]>;
const everyResultFieldListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyResultFieldListed;

const reserved = new Set<string>(PAYLOAD_FIELDS);

/**
 * Parse `a:1,b:two` into `{a: "1", b: "two"}`. A value may itself contain colons (split at the
 * first one); whitespace around keys and values is dropped. Throws InvalidRequestError for a pair
 * without a colon, an empty key, a repeated key or a key that names a payload field.
 */
export function parseWebhookExtra(raw: string): Record<string, string> {
  const pairs: [string, string][] = [];
  if (raw.trim() === '') return {};
  const seen = new Set<string>();
  for (const [i, part] of raw.split(',').entries()) {
    const colon = part.indexOf(':');
    const key = colon < 0 ? '' : part.slice(0, colon).trim();
    if (colon < 0 || key === '')
      throw new InvalidRequestError(`webhook_extra must be comma-separated key:value pairs; pair ${i + 1} ("${part.trim()}") is not`);
    if (reserved.has(key)) throw new InvalidRequestError(`webhook_extra key "${key}" collides with a result field`);
    if (seen.has(key)) throw new InvalidRequestError(`webhook_extra key "${key}" is given twice`);
    seen.add(key);
    pairs.push([key, part.slice(colon + 1).trim()]);
  }
  // fromEntries defines own properties, so a key like "__proto__" stays an ordinary field.
  return Object.fromEntries(pairs);
}
