/**
 * A PostgreSQL database URL of a fresh schema for one test, from PARLEY_TEST_DATABASE_URL; the
 * schema is dropped afterwards. `pgSkip` is the `skip` option of tests that need it.
 */
import pg from 'pg';

const pgUrl = process.env.PARLEY_TEST_DATABASE_URL;

export const pgSkip: false | string = pgUrl ? false : 'set PARLEY_TEST_DATABASE_URL (postgres://…) to run';

export async function withPgSchema(prefix: string, run: (databaseUrl: string) => Promise<void>): Promise<void> {
  const schema = `${prefix}_${Date.now()}_${process.pid}`;
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  try {
    await admin.query(`create schema ${schema}`);
    const url = new URL(pgUrl!);
    url.searchParams.set('options', `-c search_path=${schema}`);
    await run(url.toString());
  } finally {
    await admin.query(`drop schema if exists ${schema} cascade`);
    await admin.end();
  }
}
