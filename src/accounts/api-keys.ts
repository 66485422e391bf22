/**
 * API keys: `sk_` + 40 base62 characters. Only a sha256 of the key is stored, with the first
 * characters as a lookup prefix; the check compares hashes in constant time. A key is `admin`
 * (may call /api/v1/admin/*) or `user`; either way it acts for its own account only.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Account, AccountRepository } from '../store/account-repository.js';
import type { ApiKeyRepository, ApiKeyRow } from '../store/api-key-repository.js';
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
    return { key, row, account };
  }

  /** The key's id, account and role, or null for a malformed, unknown or revoked key. */
  async authenticate(key: string): Promise<AuthenticatedKey | null> {
    if (!KEY_PATTERN.test(key)) return null;
    const wanted = Buffer.from(hashKey(key), 'hex');
    let found: AuthenticatedKey | null = null;
    for (const row of await this.keys.findActiveByPrefix(prefixOf(key))) {
      if (timingSafeEqual(wanted, Buffer.from(row.hash, 'hex')))
        found = { keyId: row.id, accountId: row.account_id, role: row.role === KEY_ROLES.admin ? KEY_ROLES.admin : KEY_ROLES.user };
    }
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
      if (found.role !== KEY_ROLES.admin) await this.keys.setRole(found.keyId, KEY_ROLES.admin);
      return;
    }
    try {
      await this.create({ name: 'env', presetKey: key, role: KEY_ROLES.admin });
    } catch (err) {
      if (!(await this.authenticate(key))) throw err;
    }
  }

  list(): Promise<ApiKeyRow[]> {
    return this.keys.list();
  }

  setRole(id: string, role: KeyRole): Promise<boolean> {
    return this.keys.setRole(id, role);
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
