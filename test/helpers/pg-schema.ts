/**
 * A PostgreSQL schema of a test's own on PARLEY_TEST_DATABASE_URL, so tests (and other engineers'
 * runs) sharing one database never see each other's tables; dropped afterwards.
 */
import pg from 'pg';
import { skipWhenMissing } from './skip.js';

export const pgTestUrl = process.env.PARLEY_TEST_DATABASE_URL;
export const skipWithoutPg = skipWhenMissing(!pgTestUrl && 'needs PostgreSQL: set PARLEY_TEST_DATABASE_URL (postgres://…); .ci/run does');

/** Run `body` with a database URL whose search_path is a fresh schema; drop the schema after. */
export async function withPgSchema<T>(name: string, body: (url: string) => Promise<T>): Promise<T> {
  const schema = `${name}_${Date.now()}_${process.pid}`;
  const admin = new pg.Client({ connectionString: pgTestUrl });
  await admin.connect();
  try {
    await admin.query(`create schema ${schema}`);
    const url = new URL(pgTestUrl!);
    url.searchParams.set('options', `-c search_path=${schema}`);
    try {
      return await body(url.toString());
    } finally {
      await admin.query(`drop schema ${schema} cascade`);
    }
  } finally {
    await admin.end();
  }
}
