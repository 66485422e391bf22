/**
 * The better-sqlite3 build that works on the running Node. 12.x is built on Node's raw ObjectWrap,
 * whose destructor on Node 24 asserts that the environment still exists: a statement collected
 * during teardown aborts the process (SIGABRT). 13.x is built on Node-API and ships its binaries in
 * the package, but requires Node 22 and crashes on Node 20. Both are installed (13.x under the
 * name better-sqlite3-napi); the API is the same.
 */
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

const require = createRequire(import.meta.url);
const nodeMajor = Number(process.versions.node.split('.')[0]);

/** The driver's package name for this Node. */
export const sqliteDriverPackage = nodeMajor >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3';

/** better-sqlite3's Database class. */
export const SqliteDatabase = require(sqliteDriverPackage) as typeof BetterSqlite3;

/** An open SQLite connection. */
export type SqliteConnection = BetterSqlite3.Database;
