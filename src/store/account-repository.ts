import type { Kysely, Selectable } from 'kysely';
import { randomBytes } from 'node:crypto';
import { newId, nowIso } from './ids.js';
import type { AccountTable, Database } from './schema.js';

export type Account = Selectable<AccountTable>;

export class AccountRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async create(name: string): Promise<Account> {
    const account: Account = {
      id: newId('acct', 12),
      name,
      webhook_secret: newWebhookSecret(),
      previous_webhook_secret: null,
      previous_webhook_secret_until: null,
      created_at: nowIso(),
    };
    await this.db.insertInto('accounts').values(account).execute();
    return account;
  }

  async find(id: string): Promise<Account | undefined> {
    return this.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /**
   * A new webhook secret; the one it replaces keeps signing deliveries (beside the new one) until
   * `overlapUntil` (an ISO time; null ends it at once). One statement, so two rotations at once
   * each keep the secret they replaced.
   */
  async rotateWebhookSecret(id: string, overlapUntil: string | null = null): Promise<string> {
    const secret = newWebhookSecret();
    await this.db
      .updateTable('accounts')
      .set((eb) => ({
        previous_webhook_secret: overlapUntil === null ? null : eb.ref('webhook_secret'),
        previous_webhook_secret_until: overlapUntil,
        webhook_secret: secret,
      }))
      .where('id', '=', id)
      .execute();
    return secret;
  }
}

function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64url')}`;
}
