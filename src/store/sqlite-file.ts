/**
 * A SQLite file behind one connection, watched for what happens to its files under a running
 * server, since SQLite itself cannot see it from its open descriptors:
 *
 * - Permissions or owner changed (the same file): an open descriptor keeps the rights it was opened
 *   with, so the file is reopened between transactions; from then on SQLite itself refuses writes
 *   to a read-only file (503s), and accepts them again once the file is writable and reopened.
 * - Deleted or replaced (the database, its -wal or its -shm no longer the files the connection has
 *   open): whatever is written would go into files no longer at their path, lost at the next start.
 *   Writes are refused and the store reports a `storage` fault (not ready) until the same files are
 *   back; a file put in their place is never opened, because the server's state was built on the
 *   old one: a restart opens it.
 * - The WAL index (-shm) made unwritable (immutable, a read-only filesystem) or truncated: SQLite
 *   maps it into memory, and a write through that mapping (every transaction makes some, reads
 *   too) ends the process with SIGBUS, which nothing in the process can catch. So the index is
 *   checked before every statement, and while it fails the check SQLite is not called at all: a
 *   `connection` fault, every statement refused at once, until it passes again.
 *
 * The -wal and -shm files stay the same files while any connection is open (each holds a shared
 * lock that keeps the others from deleting them on close), so their identity at open time is the
 * one to compare with.
 */
import { accessSync, constants, statSync, type Stats } from 'node:fs';
import { StoreFaultError, type StoreFault, type StoreLogger } from './availability.js';
import { SqliteDatabase, type SqliteConnection } from './sqlite-driver.js';

/** How often the files are compared with those opened, ms (statements compare them too). */
const FILE_CHECK_MS = 1_000;

interface FileIdentity {
  dev: number;
  ino: number;
}

/** Called with a fault found by watching the files rather than by a failing statement. */
export type FaultListener = (fault: StoreFault, err: StoreFaultError) => void;

const sameFile = (a: FileIdentity, b: FileIdentity) => a.dev === b.dev && a.ino === b.ino;

const statOrNull = (file: string): Stats | null => statSync(file, { throwIfNoEntry: false }) ?? null;

export class SqliteFile {
  private current: SqliteConnection;
  private openedAs: Stats | null;
  private walAs: FileIdentity | null = null;
  private shmAs: FileIdentity | null = null;
  /** The largest size the -shm has had: SQLite never shrinks it while open. */
  private shmSize = 0;
  /** A transaction whose ROLLBACK was refused (the index could not be touched); rolled back before anything else runs. */
  private abandonedTransaction = false;
  /** The fault last logged, so a standing one is logged once. */
  private announced: string | null = null;
  private watcher: NodeJS.Timeout | null = null;

  /** What Kysely's SqliteDialect holds: statements always go to the current connection, checked first. */
  readonly database = {
    prepare: (source: string) => this.prepare(source),
    close: () => this.close(),
  };

  constructor(
    private readonly file: string,
    private readonly log: StoreLogger,
    private readonly onFault: FaultListener,
  ) {
    this.current = SqliteFile.open(file, false);
    this.openedAs = this.file === ':memory:' ? null : statOrNull(file);
    this.noteJournalFiles();
    if (file !== ':memory:') {
      this.watcher = setInterval(() => this.check(), FILE_CHECK_MS);
      this.watcher.unref();
    }
  }

  private static open(file: string, mustExist: boolean): SqliteConnection {
    const db = new SqliteDatabase(file, { fileMustExist: mustExist });
    // WAL: a commit is one append to the -wal, far cheaper than a rollback journal's writes and
    // syncs (each blocks the event loop); busy_timeout rides out short write locks of CLI commands.
    if (!db.readonly) db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 5000');
    db.pragma('foreign_keys = ON');
    // A read, so that an existing database's -wal and -shm are open (and the index rebuilt) before they are noted.
    db.pragma('user_version', { simple: true });
    return db;
  }

  /** Records the -wal and -shm the connection has open (once they exist). */
  private noteJournalFiles(): void {
    if (this.file === ':memory:') return;
    if (!this.walAs) this.walAs = statOrNull(`${this.file}-wal`);
    if (!this.shmAs) {
      const shm = statOrNull(`${this.file}-shm`);
      if (shm) {
        this.shmAs = shm;
        this.shmSize = shm.size;
      }
    }
  }

  /**
   * A fault that makes any call into SQLite unsafe: the mapped WAL index can no longer be written
   * (immutable, read-only filesystem) or was cut short (a read past its end faults too).
   */
  private mappingFault(): StoreFault | null {
    if (!this.shmAs) this.noteJournalFiles();
    if (!this.shmAs) return null;
    const shm = `${this.file}-shm`;
    const now = statOrNull(shm);
    // Another file, or none: the mapping is of the old one, which stays intact (a `storage` fault).
    if (!now || !sameFile(now, this.shmAs)) return null;
    if (now.size < this.shmSize) return { scope: 'connection', reason: `the WAL index ${shm} was truncated under the server (${this.shmSize} → ${now.size} bytes); SQLite maps it, and reading or writing past its end would end the process (SIGBUS)` };
    this.shmSize = now.size;
    try {
      accessSync(shm, constants.W_OK);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // EACCES (mode bits) does not stop writes through an existing mapping; EPERM (immutable) and EROFS do.
      if (code === 'EPERM' || code === 'EROFS') {
        const why = code === 'EPERM' ? 'it is immutable (chattr +i)' : 'its filesystem is read-only';
        return { scope: 'connection', reason: `the WAL index ${shm} cannot be written (${code}: ${why}); SQLite maps it, and a write to it would end the process (SIGBUS)` };
      }
    }
    return null;
  }

  /** A fault that means the files at the path are not those the connection writes. */
  private lostFault(): StoreFault | null {
    if (this.file === ':memory:' || !this.openedAs) return null;
    this.noteJournalFiles();
    const files: Array<[string, FileIdentity | null]> = [
      [this.file, this.openedAs],
      [`${this.file}-wal`, this.walAs],
      [`${this.file}-shm`, this.shmAs],
    ];
    for (const [file, opened] of files) {
      if (!opened) continue;
      const now = statOrNull(file);
      if (!now) return { scope: 'storage', reason: `${file} was deleted under the running server` };
      if (!sameFile(now, opened)) return { scope: 'storage', reason: `${file} was replaced by another file under the running server` };
    }
    return null;
  }

  private prepare(source: string) {
    const unsafe = this.mappingFault();
    if (unsafe) {
      // Kysely's ROLLBACK after this comes here too and is refused: the transaction stays open until it can be ended.
      if (this.current.inTransaction) this.abandonedTransaction = true;
      this.raise(unsafe);
      throw new StoreFaultError(unsafe);
    }
    this.rollbackAbandoned();
    const statement = this.current.prepare(source);
    // Reads of the open files stay right; only a write (BEGIN, COMMIT and ROLLBACK are not) is lost.
    if (!statement.readonly) {
      const lost = this.lostFault();
      if (lost) {
        this.raise(lost);
        throw new StoreFaultError(lost);
      }
    }
    return statement;
  }

  /** Connection-scope faults first: they are the ones that make SQLite unsafe to call. */
  private fault(): StoreFault | null {
    return this.mappingFault() ?? this.lostFault();
  }

  /** Logs a fault once (with what to do about it) and hands it to the health tracker. */
  private raise(fault: StoreFault): void {
    if (this.announced !== fault.reason) {
      this.announced = fault.reason;
      const advice =
        fault.scope === 'connection'
          ? 'the database is not touched (503 for whatever needs it, not ready) until the WAL index is a writable file of its full size again'
          : `writes are refused (503) and the node is not ready: anything written now would be lost at the next start, which would also begin on a new, empty database. Put the files back, or stop the server and restore them from a backup (until it stops, the deleted files are still open in process ${process.pid}, under /proc/${process.pid}/fd)`;
      this.log.error({ file: this.file, reason: fault.reason }, `${fault.reason}: ${advice}`);
    }
    this.onFault(fault, new StoreFaultError(fault));
  }

  private rollbackAbandoned(): void {
    if (!this.abandonedTransaction) return;
    if (this.current.inTransaction) this.current.exec('rollback');
    this.abandonedTransaction = false;
  }

  /** The periodic look at the files: report a fault, else reopen the file if its permissions changed. */
  private check(): void {
    const fault = this.fault();
    if (fault) return this.raise(fault);
    this.announced = null;
    this.reopenIfChanged();
  }

  /** Reopen when the file's owner or mode changed (the same file); not inside a transaction. */
  private reopenIfChanged(): void {
    const now = statOrNull(this.file);
    const before = this.openedAs;
    if (!now || !before || !sameFile(now, before) || this.current.inTransaction) return;
    if (now.mode === before.mode && now.uid === before.uid && now.gid === before.gid) return;
    try {
      const next = SqliteFile.open(this.file, true);
      const previous = this.current;
      this.current = next;
      this.openedAs = now;
      previous.close();
      this.log.warn({ readonly: next.readonly, mode: (now.mode & 0o777).toString(8) }, 'the database file changed under the server (permissions or owner); reopened it');
    } catch (err) {
      this.log.error({ err }, 'the database file changed under the server and could not be reopened; the open connection is kept');
      this.openedAs = now;
    }
  }

  /** A write that commits (the header's user_version, to its own value): the file takes writes again. */
  probe(): void {
    const fault = this.fault();
    if (fault) throw new StoreFaultError(fault);
    this.announced = null;
    this.rollbackAbandoned();
    this.reopenIfChanged();
    if (this.current.inTransaction) throw Object.assign(new Error('a transaction is open'), { code: 'SQLITE_BUSY' });
    const version = this.current.pragma('user_version', { simple: true }) as number;
    this.current.pragma(`user_version = ${Number(version) | 0}`);
  }

  /** Closes the connection, unless closing would write through an unsafe mapping (a checkpoint does). */
  private close(): void {
    const unsafe = this.mappingFault();
    if (unsafe) {
      // The committed transactions are in the -wal; the next open replays them.
      this.log.error({ reason: unsafe.reason }, 'the database connection is left open at shutdown: closing it would write to the WAL index');
      return;
    }
    this.current.close();
  }

  stopWatching(): void {
    if (this.watcher) clearInterval(this.watcher);
    this.watcher = null;
  }
}
