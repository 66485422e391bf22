/**
 * The server process of `npm run soak`: a real Parley server with all capabilities, configured
 * from the environment (as `parley serve` is), listening on loopback. Creates an API key and
 * reports `{url, key}` as one JSON line on stdout, then its memory use every 10 s; closes
 * gracefully on SIGTERM.
 */
import { loadConfig } from '../src/config.js';
import { startServer } from '../src/server.js';

const config = loadConfig(process.env, { port: 0, host: '127.0.0.1' });
const server = await startServer(config, { logger: { level: config.logLevel }, engines: true });
const { key } = await server.storage.apiKeys.create({ name: 'soak' });
process.stdout.write(JSON.stringify({ url: server.url, key }) + '\n');
// Then where the memory is, every 10 s: the soak prints it next to RSS (JS heap vs native).
setInterval(() => {
  const { heapUsed, external, arrayBuffers } = process.memoryUsage();
  process.stdout.write(JSON.stringify({ heapUsed, external, arrayBuffers }) + '\n');
}, 10_000).unref();

process.once('SIGTERM', () => {
  server.close().then(
    () => process.exit(0),
    (err) => {
      process.stderr.write(`soak server: close failed: ${(err as Error).message}\n`);
      process.exit(1);
    },
  );
});
