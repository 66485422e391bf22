/**
 * `X-Webhook-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, keyed by the
 * account's webhook secret. The timestamp is inside the signed text, so a
 * receiver that checks its age rejects replays of an old delivery.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export function signWebhook(secret: string, body: string, timestampSeconds: number): string {
  const t = Math.floor(timestampSeconds);
  const v1 = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
  return `t=${t},v1=${v1}`;
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
  const fields = new Map(header.split(',').map((kv) => kv.trim().split('=', 2) as [string, string]));
  const t = Number(fields.get('t'));
  const v1 = fields.get('v1') ?? '';
  if (!Number.isInteger(t) || !/^[0-9a-f]{64}$/.test(v1)) return false;
  const now = options.nowSeconds ?? Date.now() / 1000;
  if (Math.abs(now - t) > (options.toleranceSeconds ?? 300)) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest();
  return timingSafeEqual(expected, Buffer.from(v1, 'hex'));
}
