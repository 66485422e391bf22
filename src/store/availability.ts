/**
 * The database as something that can go away: a PostgreSQL restart or failover, a SQLite file made
 * read-only, deleted or replaced, its WAL index made unwritable, or a full disk. Every statement goes through a guarded driver that turns such failures
 * into DatabaseUnavailableError (503 with Retry-After for a client; the real cause is logged once
 * when the state changes and stays on the error as `cause`), and a health tracker that knows
 * whether the database is usable, probes it with backoff while it is not, and tells waiters when
 * it is back. Errors that say something about the statement itself (a constraint, a syntax error)
 * pass through unchanged.
 */
import type { DatabaseConnection, Dialect, Driver, QueryResult, TransactionSettings, CompiledQuery } from 'kysely';
import { ParleyError } from '../errors.js';

/**
 * How a failure affects the database as a whole:
 * - `connection`: it cannot be reached (refused, reset, shutting down, connect timeout). Further
 *   statements fail at once without trying, until a probe reaches it again.
 * - `storage`: it answers but cannot write (read-only file or standby, full disk, I/O error).
 *   Statements still run (reads may work); the node reports not ready until a probe writes again.
 * - `contention`: this statement waited too long (busy file, lock, statement timeout). Only this
 *   request fails; the state does not change.
 */
export type FaultScope = 'connection' | 'storage' | 'contention';

export interface StoreFault {
  scope: FaultScope;
  /** The cause in a few words, for logs and the admin view of /readyz. */
  reason: string;
}

/** The database cannot serve this request now; retrying after `retryAfterSeconds` may work. */
export class DatabaseUnavailableError extends ParleyError {
  readonly code = 'ServiceUnavailable';
  readonly status = 503;
  constructor(
    readonly fault: StoreFault,
    retryAfterSeconds: number,
    options?: { cause?: unknown },
  ) {
    // The sentence a client sees says what to do; the cause (a host name, a file path) stays in the log.
    super('The database is unavailable. Please try again later.', options);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** A fault found by watching the database's files rather than raised by a statement. */
export class StoreFaultError extends Error {
  constructor(readonly fault: StoreFault) {
    super(fault.reason);
    this.name = 'StoreFaultError';
  }
}

// SQLSTATE classes and codes (PostgreSQL appendix A).
const PG_CONNECTION = new Set(['57P01', '57P02', '57P03', '53300', '08000', '08001', '08003', '08004', '08006', '08P01']);
const PG_STORAGE = new Set(['53100', '53200', '25006', '58030']);
const PG_CONTENTION = new Set(['57014', '55P03', '40001', '40P01']);
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED']);
// What node-postgres says when a connection ends or never starts (it gives these no code).
const PG_CONNECTION_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout|Client was closed and is not queryable|Cannot use a pool after calling end)/;

/** The fault `err` means, or null for an error about the statement itself. */
export function classifyStoreError(err: unknown): StoreFault | null {
  if (err instanceof DatabaseUnavailableError || err instanceof StoreFaultError) return err.fault;
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  const message = typeof e?.message === 'string' ? e.message : String(err);
  if (code.startsWith('SQLITE_')) {
    if (/^SQLITE_(BUSY|LOCKED)/.test(code)) return { scope: 'contention', reason: `${code}: ${message}` };
    if (/^SQLITE_(READONLY|FULL|IOERR|CANTOPEN|PERM|NOLFS)/.test(code)) return { scope: 'storage', reason: `${code}: ${message}` };
    return null;
  }
  if (PG_CONNECTION.has(code) || SOCKET_CODES.has(code) || PG_CONNECTION_MESSAGES.test(message)) return { scope: 'connection', reason: code ? `${code}: ${message}` : message };
  if (PG_STORAGE.has(code)) return { scope: 'storage', reason: `${code}: ${message}` };
  if (PG_CONTENTION.has(code)) return { scope: 'contention', reason: `${code}: ${message}` };
  return null;
}

export interface StoreLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface HealthOptions {
  /** One statement that succeeds only when the database is usable again (for `storage` faults, a write). */
  probe: () => Promise<void>;
  log: StoreLogger;
  /** First probe delay after a failure, ms; doubles per failed probe up to maxProbeIntervalMs. */
  firstProbeDelayMs?: number;
  maxProbeIntervalMs: number;
  clock?: () => number;
}

export interface HealthView {
  ok: boolean;
  /** The cause while not ok. */
  error?: string;
  /** ISO time the database became unusable. */
  since?: string;
}

/**
 * Whether the database is usable. A `connection` or `storage` fault makes it unusable until the
 * probe succeeds; the probe runs with exponential backoff (capped), and stops when the tracker is closed.
 */
export class StoreHealth {
  private fault: StoreFault | null = null;
  private downSince = 0;
  private probeDelayMs: number;
  private probeTimer: NodeJS.Timeout | null = null;
  private probing: Promise<void> | null = null;
  private waiters: Array<() => void> = [];
  private closed = false;
  private readonly clock: () => number;

  constructor(private readonly options: HealthOptions) {
    this.probeDelayMs = options.firstProbeDelayMs ?? 200;
    this.clock = options.clock ?? Date.now;
  }

  /** True unless a connection or storage fault is standing. */
  get available(): boolean {
    return this.fault === null;
  }

  /** True while statements should fail at once rather than wait for a connection that will not come. */
  get unreachable(): boolean {
    return this.fault?.scope === 'connection';
  }

  /** Seconds a client should wait: until about the next probe. */
  get retryAfterSeconds(): number {
    return Math.max(1, Math.ceil(this.probeDelayMs / 1000));
  }

  view(): HealthView {
    if (!this.fault) return { ok: true };
    return { ok: false, error: this.fault.reason, since: new Date(this.downSince).toISOString() };
  }

  /** A statement failed with `fault` (cause `err`): log the change and start probing. */
  report(fault: StoreFault, err: unknown): void {
    if (fault.scope === 'contention') {
      this.options.log.warn({ err, reason: fault.reason }, 'database statement gave up waiting');
      return;
    }
    if (this.closed) return;
    // A connection fault outranks a storage one: it is the one that makes statements fail at once.
    if (this.fault && (this.fault.scope === 'connection' || fault.scope === 'storage')) return;
    const first = this.fault === null;
    this.fault = fault;
    if (first) {
      this.downSince = this.clock();
      this.probeDelayMs = this.options.firstProbeDelayMs ?? 200;
    }
    this.options.log.error({ err, reason: fault.reason }, `database unavailable (${fault.scope}); requests that need it get 503 until it answers again`);
    this.scheduleProbe();
  }

  /** Resolves when the database is usable (at once if it is), or when the tracker closes. */
  whenAvailable(): Promise<void> {
    if (this.fault === null || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Probe now (a readiness check) unless a probe is already on its way. */
  async probeNow(): Promise<void> {
    if (this.fault === null || this.closed) return;
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.probeTimer = null;
    await this.runProbe();
  }

  close(): void {
    this.closed = true;
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.probeTimer = null;
    this.release();
  }

  private scheduleProbe(): void {
    if (this.probeTimer || this.probing || this.closed) return;
    this.probeTimer = setTimeout(() => {
      this.probeTimer = null;
      void this.runProbe();
    }, this.probeDelayMs);
    this.probeTimer.unref();
  }

  private runProbe(): Promise<void> {
    this.probing ??= (async () => {
      try {
        await this.options.probe();
        const downMs = this.clock() - this.downSince;
        this.options.log.warn({ downMs, reason: this.fault?.reason }, `database usable again after ${Math.round(downMs / 100) / 10} s`);
        this.fault = null;
        this.release();
      } catch (err) {
        const fault = classifyStoreError(err);
        // A fault of another scope (reachable again but still read-only) replaces the standing one.
        if (fault && fault.scope !== 'contention' && fault.scope !== this.fault?.scope) {
          this.fault = fault;
          this.options.log.error({ err, reason: fault.reason }, `database still unavailable (${fault.scope})`);
        }
        this.probeDelayMs = Math.min(this.options.maxProbeIntervalMs, this.probeDelayMs * 2);
      } finally {
        this.probing = null;
      }
      if (this.fault) this.scheduleProbe();
    })();
    return this.probing;
  }

  private release(): void {
    for (const resolve of this.waiters.splice(0)) resolve();
  }
}

/**
 * A dialect whose driver reports faults to `health` and throws DatabaseUnavailableError for them;
 * while the database is unreachable, a connection is refused at once instead of waiting.
 */
export function guardedDialect(dialect: Dialect, health: StoreHealth): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createDriver: () => new GuardedDriver(dialect.createDriver(), health),
  };
}

class GuardedDriver implements Driver {
  constructor(
    private readonly inner: Driver,
    private readonly health: StoreHealth,
  ) {}

  private fail(err: unknown): never {
    const fault = classifyStoreError(err);
    if (!fault) throw err;
    if (!(err instanceof DatabaseUnavailableError)) this.health.report(fault, err);
    throw err instanceof DatabaseUnavailableError ? err : new DatabaseUnavailableError(fault, this.health.retryAfterSeconds, { cause: err });
  }

  // Every call is awaited inside try: some drivers (better-sqlite3 under Kysely) throw synchronously.
  async init(): Promise<void> {
    try {
      await this.inner.init();
    } catch (err) {
      this.fail(err);
    }
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    if (this.health.unreachable) {
      const { error } = this.health.view();
      throw new DatabaseUnavailableError({ scope: 'connection', reason: error ?? 'unreachable' }, this.health.retryAfterSeconds);
    }
    try {
      return new GuardedConnection(await this.inner.acquireConnection(), this);
    } catch (err) {
      this.fail(err);
    }
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    try {
      await this.inner.beginTransaction(unwrap(connection), settings);
    } catch (err) {
      this.fail(err);
    }
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await this.inner.commitTransaction(unwrap(connection));
    } catch (err) {
      this.fail(err);
    }
  }

  /**
   * A failed statement may already have ended the transaction (SQLite rolls back on a full disk
   * or an I/O error; a lost PostgreSQL connection has none left), and then ROLLBACK fails too.
   * Kysely would throw that second error in place of the first; the first is the one that says
   * what happened, so a failing rollback is not raised.
   */
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await this.inner.rollbackTransaction(unwrap(connection));
    } catch {
      // The transaction is gone either way; the statement's own error follows.
    }
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(unwrap(connection));
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }

  /** Used by GuardedConnection. */
  failWith(err: unknown): never {
    return this.fail(err);
  }
}

class GuardedConnection implements DatabaseConnection {
  constructor(
    readonly inner: DatabaseConnection,
    private readonly driver: GuardedDriver,
  ) {}

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return await this.inner.executeQuery<R>(compiledQuery);
    } catch (err) {
      this.driver.failWith(err);
    }
  }

  async *streamQuery<R>(compiledQuery: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    try {
      yield* this.inner.streamQuery<R>(compiledQuery, chunkSize);
    } catch (err) {
      this.driver.failWith(err);
    }
  }
}

function unwrap(connection: DatabaseConnection): DatabaseConnection {
  return connection instanceof GuardedConnection ? connection.inner : connection;
}
