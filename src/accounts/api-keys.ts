/**
 * API keys: `sk_` + 40 base62 characters. Only a sha256 of the key is stored, with the first
 * characters as a lookup prefix; the check compares hashes in constant time.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Account, AccountRepository } from '../store/account-repository.js';
import type { ApiKeyRepository, ApiKeyRow } from '../store/api-key-repository.js';
import { newId, nowIso, randomBase62 } from '../store/ids.js';

const PREFIX_LENGTH = 8;
const KEY_PATTERN = /^sk_[A-Za-z0-9]{32,}$/;

export interface CreatedKey {
  /** The key itself: shown once, never stored. */
  key: string;
  row: ApiKeyRow;
  account: Account;
}

function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

function prefixOf(key: string): string {
  return key.slice(3, 3 + PREFIX_LENGTH);
}

export class ApiKeyService {
  constructor(
    private readonly keys: ApiKeyRepository,
    private readonly accounts: AccountRepository,
  ) {}

  /**
   * Create a key. Without `accountId` a new account named `name` is made for it.
   * `presetKey` stores a key chosen by the operator (PARLEY_API_KEY) instead of a random one.
   */
  async create(options: { name?: string; accountId?: string; presetKey?: string } = {}): Promise<CreatedKey> {
    const name = options.name ?? 'default';
    const account = options.accountId ? await this.accounts.find(options.accountId) : await this.accounts.create(name);
    if (!account) throw new Error(`No account ${options.accountId}`);
    const key = options.presetKey ?? `sk_${randomBase62(40)}`;
    if (!KEY_PATTERN.test(key)) throw new Error('A key must look like sk_ followed by at least 32 letters or digits');
    const row: ApiKeyRow = {
      id: newId('key', 12),
      account_id: account.id,
      name,
      prefix: prefixOf(key),
      hash: hashKey(key),
      created_at: nowIso(),
      revoked_at: null,
    };
    await this.keys.insert(row);
    return { key, row, account };
  }

  /** The account id the key belongs to, or null for a malformed, unknown or revoked key. */
  async authenticate(key: string): Promise<string | null> {
    if (!KEY_PATTERN.test(key)) return null;
    const wanted = Buffer.from(hashKey(key), 'hex');
    let accountId: string | null = null;
    for (const row of await this.keys.findActiveByPrefix(prefixOf(key))) {
      if (timingSafeEqual(wanted, Buffer.from(row.hash, 'hex'))) accountId = row.account_id;
    }
    return accountId;
  }

  /** True when the key with this hash already exists (used for PARLEY_API_KEY on start). */
  async exists(key: string): Promise<boolean> {
    return (await this.authenticate(key)) !== null;
  }

  list(): Promise<ApiKeyRow[]> {
    return this.keys.list();
  }

  revoke(id: string): Promise<boolean> {
    return this.keys.revoke(id);
  }

  countActive(): Promise<number> {
    return this.keys.countActive();
  }

  async webhookSecret(keyId: string, rotate: boolean): Promise<string | null> {
    const row = await this.keys.find(keyId);
    if (!row) return null;
    if (rotate) return this.accounts.rotateWebhookSecret(row.account_id);
    return (await this.accounts.find(row.account_id))?.webhook_secret ?? null;
  }
}
