/**
 * Kysely table types. Times are ISO-8601 UTC strings in both backends (portable, sortable);
 * JSON columns are text holding JSON.
 */
import type { Generated } from 'kysely';

export interface AccountTable {
  id: string;
  name: string;
  /** HMAC key of webhook signatures (decisions.md point 25); rotated by the CLI. */
  webhook_secret: string;
  created_at: string;
}

export interface ApiKeyTable {
  id: string;
  account_id: string;
  name: string;
  /** First characters of the key after `sk_`: finds the row without storing the key. */
  prefix: string;
  /** sha256 hex of the whole key; compared in constant time. */
  hash: string;
  created_at: string;
  revoked_at: string | null;
}

export interface ClonedVoiceTable {
  id: string;
  account_id: string;
  display_name: string;
  accent: string;
  /** JSON array of strings. */
  tags: string;
  model: string;
  /** processing | completed | failed */
  status: string;
  created_at: string;
  /** Speaker embedding or reference audio path, engine-specific; null until processed. */
  reference_path: string | null;
}

export interface PronunciationDictTable {
  id: string;
  account_id: string;
  /** JSON array of {word, pronunciation}. */
  items: string;
  created_at: string;
  updated_at: string;
}

export interface Database {
  accounts: AccountTable;
  api_keys: ApiKeyTable;
  cloned_voices: ClonedVoiceTable;
  pronunciation_dicts: PronunciationDictTable;
}

export type { Generated };
