/**
 * The `parley` command: argument parsing only; every action calls the same functions the server
 * uses. `parley serve | keys … | models … | voices …`. Only `serve` starts background work (the
 * job runner, retention); the others open what they need and leave a running server's jobs alone.
 */
import { parseArgs } from 'node:util';
import { KEY_ROLES } from '../accounts/api-keys.js';
import { loadConfig, ConfigError, type Config } from '../config.js';
import { buildStorage } from '../compose/storage.js';

const usage = `Usage: parley <command>

  serve                              start the HTTP server (PORT, HOST, PARLEY_* env)
  keys create [--name N] [--account ID] [--admin]
                                     create an API key (a new account unless --account); prints it once.
                                     --admin: the key may also call /api/v1/admin/* (model reloads)
  keys list                          list keys (id, account, name, role, prefix, created, revoked)
  keys role <key-id> admin|user      change a key's role
  keys revoke <key-id>               revoke a key
  keys webhook-secret <key-id> [--rotate [--overlap SECONDS]]
                                     show (or rotate) the webhook signing secret of the key's account;
                                     after a rotation the old secret signs too for --overlap seconds
                                     (default webhooks.secretOverlapSeconds, 86400; 0 ends it at once)
  models list|pull|rm|verify …       manage model packs (parley models --help)
  voices [--model tts-v2|tts-v3.1]   list the voices the server would offer
`;

export async function main(argv: string[], out: NodeJS.WritableStream = process.stdout): Promise<number> {
  const [command, ...rest] = argv;
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      return 2;
    }
    throw err;
  }
  switch (command) {
    case 'serve': {
      // Loaded only to serve: the server's modules take seconds to load, which `keys` and `models` need not pay.
      const { serve } = await import('./serve.js');
      return serve(config);
    }
    case 'keys':
      return keysCommand(config, rest, out);
    case 'models': {
      const { runModelsCommand } = await import('./models.js');
      return runModelsCommand(rest, { modelsDir: config.modelsDir, dataDir: config.dataDir, espeakDataDir: config.synthesis.espeakDataDir, out });
    }
    case 'voices': {
      const { voicesCommand } = await import('./voices.js');
      return voicesCommand(config, rest, out);
    }
    case undefined:
    case '-h':
    case '--help':
    case 'help':
      out.write(usage);
      return command ? 0 : 2;
    default:
      process.stderr.write(`Unknown command "${command}"\n${usage}`);
      return 2;
  }
}

async function keysCommand(config: Config, argv: string[], out: NodeJS.WritableStream): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      account: { type: 'string' },
      admin: { type: 'boolean' },
      rotate: { type: 'boolean' },
      overlap: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const [sub, id, arg] = positionals;
  const storage = await buildStorage(config);
  try {
    const { apiKeys } = storage;
    switch (sub) {
      case 'create': {
        const role = values.admin ? KEY_ROLES.admin : KEY_ROLES.user;
        const created = await apiKeys.create({ name: values.name, accountId: values.account, role });
        if (values.json) out.write(JSON.stringify({ id: created.row.id, accountId: created.account.id, role, key: created.key }) + '\n');
        else out.write(`Created ${role} key ${created.row.id} for account ${created.account.id} (${created.row.name}).\n${created.key}\nStore it now: it is not shown again.\n`);
        return 0;
      }
      case 'list': {
        const rows = await apiKeys.list();
        if (values.json) {
          out.write(
            JSON.stringify(
              rows.map((r) => ({ id: r.id, accountId: r.account_id, name: r.name, role: r.role, prefix: `sk_${r.prefix}…`, createdAt: r.created_at, revokedAt: r.revoked_at })),
            ) + '\n',
          );
        } else {
          for (const r of rows) out.write(`${r.id}\t${r.account_id}\t${r.name}\t${r.role}\tsk_${r.prefix}…\t${r.created_at}\t${r.revoked_at ? `revoked ${r.revoked_at}` : 'active'}\n`);
        }
        return 0;
      }
      case 'role': {
        if (!id || (arg !== KEY_ROLES.admin && arg !== KEY_ROLES.user)) throw new UsageError('keys role needs a key id and admin or user');
        if (!(await apiKeys.setRole(id, arg))) {
          process.stderr.write(`No key ${id}\n`);
          return 1;
        }
        out.write(`${id} is now ${arg}\n`);
        return 0;
      }
      case 'revoke': {
        if (!id) throw new UsageError('keys revoke needs a key id (see parley keys list)');
        if (!(await apiKeys.revoke(id))) {
          process.stderr.write(`No active key ${id}\n`);
          return 1;
        }
        out.write(`Revoked ${id}\n`);
        return 0;
      }
      case 'webhook-secret': {
        if (!id) throw new UsageError('keys webhook-secret needs a key id (see parley keys list)');
        const overlap = values.overlap === undefined ? config.webhooks.secretOverlapSeconds : Number(values.overlap);
        if (!Number.isInteger(overlap) || overlap < 0) throw new UsageError('--overlap must be a whole number of seconds');
        if (values.overlap !== undefined && !values.rotate) throw new UsageError('--overlap goes with --rotate');
        const secret = await apiKeys.webhookSecret(id, values.rotate ?? false, overlap);
        if (!secret) {
          process.stderr.write(`No key ${id}\n`);
          return 1;
        }
        out.write(`${secret}\n`);
        return 0;
      }
      default:
        throw new UsageError(`Unknown keys command "${sub ?? ''}"`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n${usage}`);
      return 2;
    }
    throw err;
  } finally {
    await storage.close();
  }
}

class UsageError extends Error {}
