/**
 * Admission control: whether a synthesis or transcription request may start is decided in
 * onRequest, from its headers, before its body is read or decoded. Each family has a depth of
 * requests in flight on this node (admission.<family>.maxInFlight) and one account may hold at
 * most admission.accountShare of it; beyond either the answer is 503 with Retry-After and
 * `Connection: close`, so a refused request costs a header parse and a small write, never an
 * upload or a decode, and a client retrying at once cannot take the CPU from admitted work.
 * WebSocket upgrades are bounded by the socket limits instead, and a transcription submitted as a
 * job (`webhook_url`) by the job queue: its request only stores the audio and answers at once, and
 * clients submit those in bulk.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import { OverloadedError } from '../../errors.js';

type AdmissionSettings = Config['admission'];
type Family = 'synthesis' | 'transcription';

/** Weight of the newest duration in the running mean that Retry-After is taken from. */
const DURATION_WEIGHT = 0.2;

export class Admission {
  private readonly inFlight: Record<Family, number> = { synthesis: 0, transcription: 0 };
  private readonly perAccount = new Map<string, number>();
  /** Running mean of how long an admitted request of each family holds its place, ms. */
  private readonly meanMs: Record<Family, number> = { synthesis: 1_000, transcription: 1_000 };

  constructor(private readonly settings: AdmissionSettings) {}

  /** onRequest hook, after authentication (the account's share needs the account). */
  readonly hook = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const family = request.routeOptions.config.rateFamily;
    if (family !== 'synthesis' && family !== 'transcription') return;
    if (request.headers.upgrade !== undefined) return;
    if (family === 'transcription' && (request.query as { webhook_url?: unknown } | undefined)?.webhook_url !== undefined) return;
    const depth = this.settings[family].maxInFlight;
    if (depth <= 0) return;
    const share = Math.max(1, Math.floor(depth * this.settings.accountShare));
    const key = `${family}:${request.accountId}`;
    const mine = this.perAccount.get(key) ?? 0;
    if (this.inFlight[family] >= depth || mine >= share) {
      // The body stays unread: the connection is closed after the answer instead of read to its end.
      reply.header('Connection', 'close');
      const wait = Math.max(1, Math.round(this.meanMs[family] / 1000));
      throw new OverloadedError(wait, mine >= share ? 'This account has too many requests in progress. Please try again later.' : undefined);
    }
    this.inFlight[family]++;
    this.perAccount.set(key, mine + 1);
    const started = performance.now();
    reply.raw.once('close', () => {
      this.inFlight[family]--;
      const left = (this.perAccount.get(key) ?? 1) - 1;
      if (left > 0) this.perAccount.set(key, left);
      else this.perAccount.delete(key);
      this.meanMs[family] += DURATION_WEIGHT * (performance.now() - started - this.meanMs[family]);
    });
  };
}
