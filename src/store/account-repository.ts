import type { Kysely } from 'kysely';
import { randomBytes } from 'node:crypto';
import { newId, nowIso } from './ids.js';
import type { AccountTable, Database } from './schema.js';

export type Account = AccountTable;

export class AccountRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async create(name: string): Promise<Account> {
    const account: Account = {
      id: newId('acct', 12),
      name,
      webhook_secret: newWebhookSecret(),
      created_at: nowIso(),
    };
    await this.db.insertInto('accounts').values(account).execute();
    return account;
  }

  async find(id: string): Promise<Account | undefined> {
    return this.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async rotateWebhookSecret(id: string): Promise<string> {
    const secret = newWebhookSecret();
    await this.db.updateTable('accounts').set({ webhook_secret: secret }).where('id', '=', id).execute();
    return secret;
  }
}

function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64url')}`;
}
