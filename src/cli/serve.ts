import type { Config } from '../config.js';
import { startServer } from '../server.js';

/** Start the server and stop it gracefully on SIGTERM/SIGINT (in-flight requests finish first). */
export async function serve(config: Config): Promise<number> {
  const server = await startServer(config, {
    logger: { level: config.logLevel },
    firstRun: true,
    onFirstKey: (key) => {
      process.stdout.write(
        `\n  No API key existed, so Parley created one. It is shown only this once:\n\n    ${key}\n\n` +
          `  Use it as: Authorization: Bearer ${key}\n\n`,
      );
    },
  });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      server.app.log.warn({ signal }, 'second signal: exiting at once');
      process.exit(1);
    }
    stopping = true;
    server.app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    server.close().then(
      () => process.exit(0),
      (err) => {
        server.app.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  return 0;
}
