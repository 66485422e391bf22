/**
 * The server process of `npm run soak`: a real Parley server with all capabilities, configured
 * from the environment (as `parley serve` is), listening on loopback. Creates an API key and
 * reports `{url, key}` as one JSON line on stdout; closes gracefully on SIGTERM.
 */
import { capabilities } from '../src/capabilities.js';
import { loadConfig } from '../src/config.js';
import { startServer } from '../src/server.js';

const config = loadConfig(process.env, { port: 0, host: '127.0.0.1' });
const server = await startServer(config, { logger: { level: config.logLevel }, capabilities });
const { key } = await server.services.apiKeys.create({ name: 'soak' });
process.stdout.write(JSON.stringify({ url: server.url, key }) + '\n');

process.once('SIGTERM', () => {
  server.close().then(
    () => process.exit(0),
    (err) => {
      process.stderr.write(`soak server: close failed: ${(err as Error).message}\n`);
      process.exit(1);
    },
  );
});
