/**
 * Storage and the account services built on it: what the server and every CLI command that
 * touches the database need.
 */
import { sql } from 'kysely';
import pino from 'pino';
import { ApiKeyService, KEY_ROLES } from '../accounts/api-keys.js';
import type { Config } from '../config.js';
import { InProcessRateLimitStore, SharedRateLimitStore, type RateLimitStore } from '../store/rate-limits.js';
import { InProcessSocketSlots, SharedSocketSlots, type SocketSlotStore } from '../store/socket-slots.js';
import type { ReadinessResult } from '../lifecycle.js';
import { AccountRepository } from '../store/account-repository.js';
import { DatabaseUnavailableError } from '../store/availability.js';
import { ApiKeyRepository } from '../store/api-key-repository.js';
import { ClonedVoiceRepository } from '../store/cloned-voice-repository.js';
import { openStore, type Store } from '../store/database.js';
import { newNodeId } from '../store/ids.js';
import { PronunciationDictRepository } from '../store/pronunciation-dict-repository.js';
import { RateLimitRepository } from '../store/rate-limit-repository.js';
import { SocketSlotRepository } from '../store/socket-slot-repository.js';
import { PronunciationDictCache } from '../synthesis/pronunciation-dict-cache.js';

export interface Storage {
  store: Store;
  /** This process's id among the nodes sharing the database (job locks, leases). */
  nodeId: string;
  accounts: AccountRepository;
  apiKeys: ApiKeyService;
  clonedVoices: ClonedVoiceRepository;
  dicts: PronunciationDictRepository;
  /** Compiled dictionaries, shared by the dictionary routes (which fill it) and synthesis (which reads it). */
  dictCache: PronunciationDictCache;
  readiness(): Promise<ReadinessResult>;
  close(): Promise<void>;
}

export async function buildStorage(config: Config): Promise<Storage> {
  const store = await openStore({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    settings: config.database,
    log: pino({ name: 'database', level: config.logLevel }),
  });
  const accounts = new AccountRepository(store.db);
  const dicts = new PronunciationDictRepository(store.db);
  return {
    store,
    nodeId: newNodeId(),
    accounts,
    apiKeys: new ApiKeyService(new ApiKeyRepository(store.db), accounts, {
      cacheTtlMs: config.auth.keyCacheTtlMs,
      cacheMaxEntries: config.auth.keyCacheMaxEntries,
      outageGraceMs: config.auth.keyOutageGraceMs,
      databaseAvailable: () => store.health.available,
    }),
    clonedVoices: new ClonedVoiceRepository(store.db),
    dicts,
    dictCache: new PronunciationDictCache(dicts, { maxBytes: config.synthesis.dictCacheMb * 1024 * 1024, maxEntriesPerRequest: config.limits.maxDictEntriesPerRequest }),
    // While the database is unusable this answers from the health tracker after one probe (at
    // most one at a time, and waited for at most a second), so /readyz never queues on a dead pool.
    async readiness() {
      const { health } = store;
      if (!health.available) await Promise.race([health.probeNow(), new Promise((r) => setTimeout(r, 1_000).unref())]);
      else {
        const failed = await sql`select 1`.execute(store.db).then(() => null, (err: Error) => err);
        if (failed && health.available) return { ok: false, error: failed.message, backend: store.backend.name };
      }
      return { ...health.view(), backend: store.backend.name };
    },
    close: () => store.close(),
  };
}

/**
 * PARLEY_API_KEY is accepted (stored on first sight) as an admin key; with no key at all, an admin
 * key is created and returned so the caller can print it once.
 */
export async function ensureFirstKey(storage: Storage, config: Config): Promise<string | null> {
  const { apiKeys } = storage;
  if (config.apiKey) {
    await apiKeys.ensureOperatorKey(config.apiKey);
    return null;
  }
  if ((await apiKeys.countActive()) > 0) return null;
  return (await apiKeys.create({ name: 'default', role: KEY_ROLES.admin })).key;
}

/**
 * One node (SQLite): buckets in process. Several nodes (PostgreSQL): buckets in the database, and
 * while it is unavailable, this node's own buckets, so an account stays bounded on each node
 * (the outage itself is logged once by the store, not per request).
 */
export function buildRateLimitStore(storage: Storage, onError: (err: unknown) => void): RateLimitStore {
  const { store } = storage;
  if (store.backend.singleProcess) return new InProcessRateLimitStore();
  const shared = new SharedRateLimitStore(new RateLimitRepository(store.db), unlessOutage(onError));
  const local = new InProcessRateLimitStore();
  return {
    take: (key, limit, now) => (store.health.available ? shared.take(key, limit) : local.take(key, limit, now)),
    close: () => {
      shared.close();
      local.close();
    },
  };
}

/** `onError` for everything but DatabaseUnavailableError, which the store has logged when the outage began. */
function unlessOutage(onError: (err: unknown) => void): (err: unknown) => void {
  return (err) => {
    if (!(err instanceof DatabaseUnavailableError)) onError(err);
  };
}

/** One node (SQLite): socket slots counted in process. Several nodes (PostgreSQL): in the database. */
export function buildSocketSlots(storage: Storage, config: Config, onError: (err: unknown) => void): SocketSlotStore {
  const { store } = storage;
  if (store.backend.singleProcess) return new InProcessSocketSlots();
  return new SharedSocketSlots(new SocketSlotRepository(store.db, store.backend), storage.nodeId, config.realtime.socketLeaseMs, unlessOutage(onError));
}
