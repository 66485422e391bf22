/**
 * API keys: `sk_` + 40 base62 characters. Only a sha256 of the key is stored, with the first
 * characters as a lookup prefix; the check compares hashes in constant time.
 * Lookups, found or not, are remembered for a few seconds (options.cacheTtlMs): a busy client costs
 * one database query per key per TTL, and a key revoked elsewhere (the CLI, another node) stops
 * working within the TTL.
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

export interface KeyCacheOptions {
  /** 0 = no cache. */
  cacheTtlMs?: number;
  cacheMaxEntries?: number;
  clock?: () => number;
}

interface CachedLookup {
  accountId: string | null;
  expiresAt: number;
}

export class ApiKeyService {
  /** By key hash, in insertion order: with one TTL for all, the oldest entry expires first. */
  private readonly lookups = new Map<string, CachedLookup>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly clock: () => number;

  constructor(
    private readonly keys: ApiKeyRepository,
    private readonly accounts: AccountRepository,
    options: KeyCacheOptions = {},
  ) {
    this.ttlMs = options.cacheTtlMs ?? 0;
    this.maxEntries = options.cacheMaxEntries ?? 10_000;
    this.clock = options.clock ?? Date.now;
  }

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
    this.lookups.clear(); // the new key may be remembered as unknown
    return { key, row, account };
  }

  /**
   * What the cache knows of `key` without asking the database: its account id, null when it is
   * known to be invalid (malformed, or looked up and not found), undefined when not remembered.
   */
  cachedAccount(key: string): string | null | undefined {
    if (!KEY_PATTERN.test(key)) return null;
    return this.recall(hashKey(key));
  }

  /** The account id the key belongs to, or null for a malformed, unknown or revoked key. */
  async authenticate(key: string): Promise<string | null> {
    if (!KEY_PATTERN.test(key)) return null;
    const hash = hashKey(key);
    const remembered = this.recall(hash);
    if (remembered !== undefined) return remembered;
    const wanted = Buffer.from(hash, 'hex');
    let accountId: string | null = null;
    for (const row of await this.keys.findActiveByPrefix(prefixOf(key))) {
      if (timingSafeEqual(wanted, Buffer.from(row.hash, 'hex'))) accountId = row.account_id;
    }
    this.remember(hash, accountId);
    return accountId;
  }

  private recall(hash: string): string | null | undefined {
    const hit = this.lookups.get(hash);
    if (!hit) return undefined;
    if (hit.expiresAt <= this.clock()) {
      this.lookups.delete(hash);
      return undefined;
    }
    return hit.accountId;
  }

  private remember(hash: string, accountId: string | null): void {
    if (this.ttlMs <= 0) return;
    const now = this.clock();
    this.lookups.delete(hash);
    this.lookups.set(hash, { accountId, expiresAt: now + this.ttlMs });
    for (const [oldest, entry] of this.lookups) {
      if (this.lookups.size <= this.maxEntries && entry.expiresAt > now) break;
      this.lookups.delete(oldest);
    }
  }

  /** True when the key with this hash already exists (used for PARLEY_API_KEY on start). */
  async exists(key: string): Promise<boolean> {
    return (await this.authenticate(key)) !== null;
  }

  list(): Promise<ApiKeyRow[]> {
    return this.keys.list();
  }

  async revoke(id: string): Promise<boolean> {
    const revoked = await this.keys.revoke(id);
    this.lookups.clear(); // at once in this process; other processes within their TTL
    return revoked;
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
