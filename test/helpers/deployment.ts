/**
 * What the deployment files (compose.yaml, deploy/kubernetes/) are checked against: the server's
 * own settings, and a real server started with a deployment's environment, so a probe path, a
 * port or a variable name that the server does not have fails the test.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import { parseAllDocuments } from 'yaml';
import { loadConfig, settings, type Config } from '../../src/config.js';
import { repoRoot } from './models.js';
import { freePort } from './server-process.js';
import { startTestServer, type TestServer } from './server.js';

/** Every environment name a setting has: `PARLEY_…` and the short names (PORT, DATABASE_URL…). */
export const settingEnvNames: ReadonlySet<string> = new Set(settings.flatMap((s) => [s.env, ...s.aliases]));

/** The documents of a YAML file of the repository, with merge keys (`<<: *anchor`) applied as Compose applies them. */
export function readYamlDocuments(relativePath: string): unknown[] {
  const text = readFileSync(path.join(repoRoot, relativePath), 'utf8');
  return parseAllDocuments(text, { merge: true }).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${relativePath}: ${doc.errors.map((e) => e.message).join('; ')}`);
    return doc.toJS();
  });
}

/** A validator of a JSON schema (draft-07 and later keywords as Ajv knows them), not strict about unknown keywords. */
export function schemaValidator(schema: object): (value: unknown) => string[] {
  const { $schema: _, ...rest } = schema as { $schema?: string };
  const ajv = new Ajv({ allErrors: true, strict: false });
  const validate = ajv.compile(rest);
  return (value) => (validate(value) ? [] : (validate.errors ?? []).map((e: ErrorObject) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`));
}

/**
 * A real server configured by a deployment's environment, its listeners moved to free loopback
 * ports and its database to a temp SQLite file; metrics on, as the deployment sets them.
 */
export async function startWithEnvironment(env: Record<string, string>): Promise<{ server: TestServer; metricsPort: number; config: Config }> {
  const { DATABASE_URL: _, ...rest } = env;
  const config = loadConfig(env);
  const metricsPort = await freePort();
  const server = await startTestServer({ env: rest, config: { metrics: { port: metricsPort, host: '127.0.0.1', token: '' } } });
  return { server, metricsPort, config };
}
