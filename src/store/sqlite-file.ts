import { statSync, type Stats } from 'node:fs';
import type { StoreLogger } from './availability.js';
import { SqliteDatabase, type SqliteConnection } from './sqlite-driver.js';

/** How often a SQLite file's permissions and identity are compared with those it was opened with, ms. */
const SQLITE_FILE_CHECK_MS = 1_000;

/**
 * A SQLite file behind one connection that can be reopened. An open file descriptor keeps the
 * rights it was opened with, so a file made read-only (or replaced, or restored from a backup)
 * under a running server would go on being written as before; the file is therefore compared
 * with what was opened every second, and reopened between transactions when it changed: from
 * then on SQLite itself refuses writes to a read-only file (503s), and accepts them again once
 * the file is writable and has changed back.
 */
export class SqliteFile {
  private current: SqliteConnection;
  private openedAs: Stats | null;
  private watcher: NodeJS.Timeout | null = null;

  /** What Kysely's SqliteDialect holds: statements always go to the current connection. */
  readonly database = {
    prepare: (source: string) => this.current.prepare(source),
    close: () => this.current.close(),
  };

  constructor(
    private readonly file: string,
    private readonly log: StoreLogger,
  ) {
    this.current = SqliteFile.open(file, false);
    this.openedAs = this.identity();
    if (file !== ':memory:') {
      this.watcher = setInterval(() => this.reopenIfChanged(), SQLITE_FILE_CHECK_MS);
      this.watcher.unref();
    }
  }

  private static open(file: string, mustExist: boolean): SqliteConnection {
    const db = new SqliteDatabase(file, { fileMustExist: mustExist });
    // WAL lets readers go on while the job runner writes; busy_timeout rides out short write locks.
    if (!db.readonly) db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 5000');
    db.pragma('foreign_keys = ON');
    return db;
  }

  private identity(): Stats | null {
    if (this.file === ':memory:') return null;
    try {
      return statSync(this.file);
    } catch {
      return null;
    }
  }

  /** Reopen when the file's owner, mode or inode changed; not inside a transaction. */
  reopenIfChanged(): void {
    const now = this.identity();
    const before = this.openedAs;
    if (!now || !before || this.current.inTransaction) return;
    if (now.ino === before.ino && now.dev === before.dev && now.mode === before.mode && now.uid === before.uid && now.gid === before.gid) return;
    try {
      const next = SqliteFile.open(this.file, true);
      const previous = this.current;
      this.current = next;
      this.openedAs = now;
      previous.close();
      this.log.warn({ readonly: next.readonly, mode: (now.mode & 0o777).toString(8) }, 'the database file changed under the server (permissions, owner or a new file); reopened it');
    } catch (err) {
      this.log.error({ err }, 'the database file changed under the server and could not be reopened; the open connection is kept');
      this.openedAs = now;
    }
  }

  /** A write that commits (the header's user_version, to its own value): the file takes writes again. */
  probe(): void {
    this.reopenIfChanged();
    if (this.current.inTransaction) throw Object.assign(new Error('a transaction is open'), { code: 'SQLITE_BUSY' });
    const version = this.current.pragma('user_version', { simple: true }) as number;
    this.current.pragma(`user_version = ${Number(version) | 0}`);
  }

  stopWatching(): void {
    if (this.watcher) clearInterval(this.watcher);
    this.watcher = null;
  }
}
