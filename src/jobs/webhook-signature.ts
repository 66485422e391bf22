/**
 * `X-Webhook-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, keyed by the
 * account's webhook secret. The timestamp is inside the signed text, so a
 * receiver that checks its age rejects replays of an old delivery. While a rotated secret still
 * overlaps, the header carries one v1 per secret, newest first: a receiver accepts the delivery
 * when any v1 matches the secret it holds, so it can switch at its own pace.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export function signWebhook(secrets: string | readonly string[], body: string, timestampSeconds: number): string {
  const t = Math.floor(timestampSeconds);
  const signatures = (typeof secrets === 'string' ? [secrets] : secrets).map((secret) => `v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`);
  return [`t=${t}`, ...signatures].join(',');
}

/** The secrets deliveries are signed with now: the account's, and the one it replaced while the overlap lasts. */
export function signingSecrets(
  account: { webhook_secret: string; previous_webhook_secret?: string | null; previous_webhook_secret_until?: string | null } | undefined,
  nowMs: number,
): string[] {
  if (!account) return [''];
  const { webhook_secret, previous_webhook_secret: previous, previous_webhook_secret_until: until } = account;
  return previous && until && Date.parse(until) > nowMs ? [webhook_secret, previous] : [webhook_secret];
}

/**
 * What a receiver does: recompute the HMAC over the raw body and compare in constant time;
 * refuse a timestamp more than `toleranceSeconds` away from now.
 */
export function verifyWebhookSignature(
  secret: string,
  body: string,
  header: string,
  options: { toleranceSeconds?: number; nowSeconds?: number } = {},
): boolean {
  const fields = header.split(',').map((kv) => kv.trim().split('=', 2) as [string, string]);
  const t = Number(fields.find(([k]) => k === 't')?.[1]);
  const signatures = fields.filter(([k, v]) => k === 'v1' && /^[0-9a-f]{64}$/.test(v ?? '')).map(([, v]) => Buffer.from(v, 'hex'));
  if (!Number.isInteger(t) || signatures.length === 0) return false;
  const now = options.nowSeconds ?? Date.now() / 1000;
  if (Math.abs(now - t) > (options.toleranceSeconds ?? 300)) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest();
  return signatures.some((v1) => timingSafeEqual(expected, v1));
}
