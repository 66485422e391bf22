/**
 * API keys: `sk_` + 40 base62 characters. Only a sha256 of the key is stored, with the first
 * characters as a lookup prefix; the check compares hashes in constant time. A key is `admin`
 * (may call /api/v1/admin/*) or `user`; either way it acts for its own account only.
 * Lookups, found or not, are remembered for a few seconds (options.cacheTtlMs): a busy client costs
 * one database query per key per TTL, and a key revoked or re-roled elsewhere (the CLI, another
 * node) changes within the TTL. While the database is unavailable, a key verified within
 * options.outageGraceMs still works, so what needs no database (synthesis) goes on through an outage.
 */
import crypto, { createHash, timingSafeEqual } from 'node:crypto';
import type { Account, AccountRepository } from '../store/account-repository.js';
import type { ApiKeyRepository, ApiKeyRow } from '../store/api-key-repository.js';
import { DatabaseUnavailableError } from '../store/availability.js';
import { newId, nowIso, randomBase62 } from '../store/ids.js';

export const KEY_ROLES = Object.freeze({ admin: 'admin', user: 'user' } as const);
export type KeyRole = (typeof KEY_ROLES)[keyof typeof KEY_ROLES];

/** Who a valid key speaks for. */
export interface AuthenticatedKey {
  keyId: string;
  accountId: string;
  role: KeyRole;
}

const PREFIX_LENGTH = 8;
const KEY_PATTERN = /^sk_[A-Za-z0-9]{32,}$/;

export interface CreatedKey {
  /** The key itself: shown once, never stored. */
  key: string;
  row: ApiKeyRow;
  account: Account;
}

/** One call where Node has it (20.12 and later): a request's key is hashed on every request. */
const sha256Hex: (text: string) => string =
  typeof (crypto as { hash?: unknown }).hash === 'function'
    ? (text) => crypto.hash('sha256', text)
    : (text) => createHash('sha256').update(text).digest('hex');

function hashKey(key: string): string {
  return sha256Hex(key);
}

function prefixOf(key: string): string {
  return key.slice(3, 3 + PREFIX_LENGTH);
}

export interface KeyCacheOptions {
  /** 0 = no cache. */
  cacheTtlMs?: number;
  cacheMaxEntries?: number;
  /** How long a verified key is still accepted while the database cannot be asked; 0 = never. */
  outageGraceMs?: number;
  /** False while the database is known to be unavailable: kept keys are answered from memory. */
  databaseAvailable?: () => boolean;
  clock?: () => number;
}

interface CachedLookup {
  key: AuthenticatedKey | null;
  /** Until then the lookup is answered from here. */
  expiresAt: number;
  /** Until then a verified key is accepted while the database is unavailable. */
  keptUntil: number;
}

export class ApiKeyService {
  /** By key hash, in insertion order: with one TTL for all, the oldest entry expires first. */
  private readonly lookups = new Map<string, CachedLookup>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly outageGraceMs: number;
  private readonly databaseAvailable: () => boolean;
  private readonly clock: () => number;

  constructor(
    private readonly keys: ApiKeyRepository,
    private readonly accounts: AccountRepository,
    options: KeyCacheOptions = {},
  ) {
    this.ttlMs = options.cacheTtlMs ?? 0;
    this.maxEntries = options.cacheMaxEntries ?? 10_000;
    this.outageGraceMs = options.outageGraceMs ?? 0;
    this.databaseAvailable = options.databaseAvailable ?? (() => true);
    this.clock = options.clock ?? Date.now;
  }

  /**
   * Create a key. Without `accountId` a new account named `name` is made for it.
   * `presetKey` stores a key chosen by the operator (PARLEY_API_KEY) instead of a random one.
   */
  async create(options: { name?: string; accountId?: string; presetKey?: string; role?: KeyRole } = {}): Promise<CreatedKey> {
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
      role: options.role ?? KEY_ROLES.user,
    };
    await this.keys.insert(row);
    this.lookups.clear(); // the new key may be remembered as unknown
    return { key, row, account };
  }

  /**
   * What the cache knows of `key` without asking the database: who it is, null when it is known
   * to be invalid (malformed, or looked up and not found), undefined when not remembered.
   */
  cachedKey(key: string): AuthenticatedKey | null | undefined {
    if (!KEY_PATTERN.test(key)) return null;
    return this.recall(hashKey(key));
  }

  /** The key's id, account and role, or null for a malformed, unknown or revoked key. */
  async authenticate(key: string): Promise<AuthenticatedKey | null> {
    if (!KEY_PATTERN.test(key)) return null;
    const hash = hashKey(key);
    const remembered = this.recall(hash);
    if (remembered !== undefined) return remembered;
    const wanted = Buffer.from(hash, 'hex');
    let found: AuthenticatedKey | null = null;
    let rows: ApiKeyRow[];
    try {
      rows = await this.keys.findActiveByPrefix(prefixOf(key));
    } catch (err) {
      const kept = err instanceof DatabaseUnavailableError ? this.lookups.get(hash) : undefined;
      if (kept?.key && kept.keptUntil > this.clock()) return kept.key;
      throw err;
    }
    for (const row of rows) {
      if (timingSafeEqual(wanted, Buffer.from(row.hash, 'hex')))
        found = { keyId: row.id, accountId: row.account_id, role: row.role === KEY_ROLES.admin ? KEY_ROLES.admin : KEY_ROLES.user };
    }
    this.remember(hash, found);
    return found;
  }

  /**
   * The operator's key (PARLEY_API_KEY): stored as an admin key on first sight, made admin if it
   * was stored as a user key. Nodes starting at once may race to store it; the unique index on
   * active key hashes lets one insert through, and the others find that row.
   */
  async ensureOperatorKey(key: string): Promise<void> {
    const found = await this.authenticate(key);
    if (found) {
      if (found.role !== KEY_ROLES.admin) await this.setRole(found.keyId, KEY_ROLES.admin);
      return;
    }
    try {
      await this.create({ name: 'env', presetKey: key, role: KEY_ROLES.admin });
    } catch (err) {
      this.lookups.clear();
      if (!(await this.authenticate(key))) throw err;
    }
  }

  private recall(hash: string): AuthenticatedKey | null | undefined {
    const hit = this.lookups.get(hash);
    if (!hit) return undefined;
    const now = this.clock();
    if (hit.expiresAt > now) return hit.key;
    if (hit.keptUntil <= now) this.lookups.delete(hash);
    else if (hit.key && !this.databaseAvailable()) return hit.key;
    return undefined;
  }

  private remember(hash: string, key: AuthenticatedKey | null): void {
    const keep = key ? Math.max(this.ttlMs, this.outageGraceMs) : this.ttlMs;
    if (keep <= 0) return;
    const now = this.clock();
    this.lookups.delete(hash);
    this.lookups.set(hash, { key, expiresAt: now + this.ttlMs, keptUntil: now + keep });
    for (const [oldest, entry] of this.lookups) {
      if (this.lookups.size <= this.maxEntries && entry.keptUntil > now) break;
      this.lookups.delete(oldest);
    }
  }

  list(): Promise<ApiKeyRow[]> {
    return this.keys.list();
  }

  async setRole(id: string, role: KeyRole): Promise<boolean> {
    const changed = await this.keys.setRole(id, role);
    this.lookups.clear(); // at once in this process; other processes within their TTL
    return changed;
  }

  async revoke(id: string): Promise<boolean> {
    const revoked = await this.keys.revoke(id);
    this.lookups.clear(); // at once in this process; other processes within their TTL
    return revoked;
  }

  /**
   * Which of `ids` are still active, asked of the database (not the cache): what open sockets
   * check, so a key revoked on any node closes them everywhere.
   */
  async stillActive(ids: readonly string[]): Promise<Set<string>> {
    return new Set(await this.keys.activeAmong(ids));
  }

  countActive(): Promise<number> {
    return this.keys.countActive();
  }

  /** The webhook secret of the key's account; `rotate` replaces it, the old one signing too for `overlapSeconds`. */
  async webhookSecret(keyId: string, rotate: boolean, overlapSeconds = 0): Promise<string | null> {
    const row = await this.keys.find(keyId);
    if (!row) return null;
    if (rotate) return (await this.rotateWebhookSecret(row.account_id, overlapSeconds)).secret;
    return (await this.accounts.find(row.account_id))?.webhook_secret ?? null;
  }

  /**
   * A new webhook secret for the account. For `overlapSeconds` deliveries carry a signature with
   * the old secret too, so receivers can switch without rejecting a delivery.
   */
  async rotateWebhookSecret(accountId: string, overlapSeconds: number): Promise<{ secret: string; previousValidUntil: string | null }> {
    const until = overlapSeconds > 0 ? new Date(this.clock() + overlapSeconds * 1000).toISOString() : null;
    return { secret: await this.accounts.rotateWebhookSecret(accountId, until), previousValidUntil: until };
  }

  /** The account's webhook secret, and until when the one it replaced still signs (null: it does not). */
  async accountWebhookSecret(accountId: string): Promise<{ secret: string; previousValidUntil: string | null } | null> {
    const account = await this.accounts.find(accountId);
    if (!account) return null;
    const until = account.previous_webhook_secret_until;
    return { secret: account.webhook_secret, previousValidUntil: until && Date.parse(until) > this.clock() ? until : null };
  }
}
