/**
 * Admission control: whether a synthesis or transcription request may start is decided from its
 * headers, before its body is read or decoded. Each family has a depth of requests in flight on
 * this node (admission.<family>.maxInFlight) and one account may hold at most admission.accountShare
 * of it; beyond either the answer is 503 with Retry-After, its body unread.
 *
 * A refusal must cost what a proxy's would, or clients retrying at once take the CPU from admitted
 * work. So while a family is full (or an account holds its share) `refuseAtWire` looks at each raw
 * request before the framework does: the route's family from a table by method and path, the
 * account from the key cache, and a full family is answered in the route's error shape with no
 * database statement, no hook and no log line; an upload is not read, and a connection is kept
 * for the client's next request when what it still sends is small. Refusals are counted (`onRefusal`) and logged
 * as a summary at most once per REFUSAL_LOG_EVERY_MS. What it cannot decide that cheaply (a key
 * not in the cache) goes on to the onRequest hook, which decides after authentication.
 *
 * WebSocket upgrades are bounded by the socket limits instead, and a transcription submitted as a
 * job (`webhook_url`) by the job queue: its request only stores the audio and answers at once, and
 * clients submit those in bulk.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { Config } from '../../config.js';
import { OverloadedError } from '../../errors.js';
import { generateRequestId } from './request-id.js';

type AdmissionSettings = Config['admission'];
export type AdmissionFamily = 'synthesis' | 'transcription';

/** Weight of the newest duration in the running mean that Retry-After is taken from. */
const DURATION_WEIGHT = 0.2;
/** A flood of refusals is logged as one summary per this long. */
const REFUSAL_LOG_EVERY_MS = 10_000;
const ACCOUNT_SHARE_MESSAGE = 'This account has too many requests in progress. Please try again later.';
/** A refused request's body up to this size is read and dropped, keeping the connection. */
const KEEP_ALIVE_BODY_BYTES = 64 * 1024;

export interface AdmissionOptions {
  /** The account of a request's `Authorization` header when the key cache knows it, without a database statement. */
  cachedAccount(authorization: string | undefined): string | undefined;
  /** The refusal's JSON body in the error shape of the route at `path`. */
  errorBody(path: string, requestId: string, error: OverloadedError): string;
  /** Headers every answer of the server carries besides the refusal's own (HSTS over TLS). */
  headers: Record<string, string>;
  /** A summary of refusals (at most one per REFUSAL_LOG_EVERY_MS). */
  logRefusals(summary: { refused: Record<AdmissionFamily, number>; seconds: number }): void;
}

export interface Refusal {
  family: AdmissionFamily;
  method: string;
  path: string;
  /** Refused before the framework saw the request (else by the onRequest hook, which the framework's own counting sees). */
  atWire: boolean;
}

export class Admission {
  private readonly inFlight: Record<AdmissionFamily, number> = { synthesis: 0, transcription: 0 };
  private readonly perAccount = new Map<string, number>();
  /** Accounts holding their share of some family now: while none does and no family is full, nothing is refused. */
  private accountsAtShare = 0;
  /** Running mean of how long an admitted request of each family holds its place, ms. */
  private readonly meanMs: Record<AdmissionFamily, number> = { synthesis: 1_000, transcription: 1_000 };
  /** The admitted family of each HTTP route, by `METHOD path` (filled as routes are added). */
  private readonly routes = new Map<string, AdmissionFamily>();
  private readonly refusalListeners: ((refusal: Refusal) => void)[] = [];
  private unlogged: Record<AdmissionFamily, number> = { synthesis: 0, transcription: 0 };
  private lastLoggedAt = 0;
  /** When the first refusal not yet logged came. */
  private unloggedSince = 0;
  private logTimer: NodeJS.Timeout | undefined;
  /** The errors refusals answer with, made once: an Error's stack costs more than the rest of a refusal. */
  private readonly busy = new OverloadedError(1);
  private readonly accountBusy = new OverloadedError(1, ACCOUNT_SHARE_MESSAGE);

  constructor(
    private readonly settings: AdmissionSettings,
    private readonly options: AdmissionOptions,
  ) {}

  /** onRoute hook: remembers which family a route's requests are admitted in. */
  readonly onRoute = (route: RouteOptions): void => {
    const family = route.config?.rateFamily;
    if (family !== 'synthesis' && family !== 'transcription') return;
    if ((route as { websocket?: boolean }).websocket) return;
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) this.routes.set(`${method} ${route.url}`, family);
  };

  /** Calls `listener` for each refusal, from the hook and at the wire alike. */
  onRefusal(listener: (refusal: Refusal) => void): void {
    this.refusalListeners.push(listener);
  }

  /** Stops the summary timer (the server is closing). */
  close(): void {
    clearTimeout(this.logTimer);
    this.flushLog();
  }

  /**
   * Before the framework sees a request: answers it 503 and returns true when its family is full,
   * or its key's account (as the key cache knows it) holds its share. Cheap when nothing is full.
   */
  readonly refuseAtWire = (request: IncomingMessage, response: ServerResponse): boolean => {
    if (this.accountsAtShare === 0 && !this.full('synthesis') && !this.full('transcription')) return false;
    if (request.headers.upgrade !== undefined) return false;
    const url = request.url ?? '';
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    const family = this.routes.get(`${request.method} ${path}`);
    if (family === undefined) return false;
    if (family === 'transcription' && query >= 0 && /[?&]webhook_url=/.test(url.slice(query))) return false;
    let error = this.busy;
    if (!this.full(family)) {
      const account = this.options.cachedAccount(request.headers.authorization);
      if (account === undefined || (this.perAccount.get(`${family}:${account}`) ?? 0) < this.share(family)) return false;
      error = this.accountBusy;
    }
    const requestId = generateRequestId(request);
    const body = this.options.errorBody(path, requestId, error);
    const headers: Record<string, string | number> = {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      'Retry-After': String(this.retryAfter(family)),
      'X-Request-Id': requestId,
      'X-Content-Type-Options': 'nosniff',
      ...this.options.headers,
    };
    // A small body is read and dropped and the connection kept for the next request, which spares a
    // client retrying at once a new connection (most of a refusal's cost); a larger one is left
    // unread, and the connection closes after the answer (lingering while the body arrives).
    const length = request.headers['content-length'];
    const small = length === undefined ? request.headers['transfer-encoding'] === undefined : Number(length) <= KEEP_ALIVE_BODY_BYTES;
    if (!small) headers.Connection = 'close';
    response.writeHead(503, headers);
    response.end(body);
    this.refused({ family, method: request.method ?? 'GET', path, atWire: true });
    return true;
  };

  /** onRequest hook, after authentication (the account's share needs the account). */
  readonly hook = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const family = request.routeOptions.config.rateFamily;
    if (family !== 'synthesis' && family !== 'transcription') return;
    if (request.headers.upgrade !== undefined) return;
    if (family === 'transcription' && (request.query as { webhook_url?: unknown } | undefined)?.webhook_url !== undefined) return;
    const depth = this.settings[family].maxInFlight;
    if (depth <= 0) return;
    const share = this.share(family);
    const key = `${family}:${request.accountId}`;
    const mine = this.perAccount.get(key) ?? 0;
    if (this.inFlight[family] >= depth || mine >= share) {
      // The body stays unread: the connection is closed after the answer instead of read to its end.
      reply.header('Connection', 'close');
      this.refused({ family, method: request.method, path: request.url, atWire: false });
      throw new OverloadedError(this.retryAfter(family), mine >= share ? ACCOUNT_SHARE_MESSAGE : undefined);
    }
    this.inFlight[family]++;
    this.perAccount.set(key, mine + 1);
    if (mine + 1 === share) this.accountsAtShare++;
    const started = performance.now();
    reply.raw.once('close', () => {
      this.inFlight[family]--;
      const left = (this.perAccount.get(key) ?? 1) - 1;
      if (left + 1 === share) this.accountsAtShare--;
      if (left > 0) this.perAccount.set(key, left);
      else this.perAccount.delete(key);
      this.meanMs[family] += DURATION_WEIGHT * (performance.now() - started - this.meanMs[family]);
    });
  };

  private full(family: AdmissionFamily): boolean {
    const depth = this.settings[family].maxInFlight;
    return depth > 0 && this.inFlight[family] >= depth;
  }

  private share(family: AdmissionFamily): number {
    const depth = this.settings[family].maxInFlight;
    return depth <= 0 ? Infinity : Math.max(1, Math.floor(depth * this.settings.accountShare));
  }

  private retryAfter(family: AdmissionFamily): number {
    return Math.max(1, Math.round(this.meanMs[family] / 1000));
  }

  private refused(refusal: Refusal): void {
    for (const listener of this.refusalListeners) listener(refusal);
    if (this.unlogged.synthesis + this.unlogged.transcription === 0) this.unloggedSince = Date.now();
    this.unlogged[refusal.family]++;
    if (this.logTimer) return;
    const wait = Math.max(0, this.lastLoggedAt + REFUSAL_LOG_EVERY_MS - Date.now());
    this.logTimer = setTimeout(() => {
      this.logTimer = undefined;
      this.flushLog();
    }, wait);
    this.logTimer.unref();
  }

  private flushLog(): void {
    const { synthesis, transcription } = this.unlogged;
    if (synthesis + transcription === 0) return;
    const now = Date.now();
    const seconds = Math.round((now - this.unloggedSince) / 1000);
    this.lastLoggedAt = now;
    this.unlogged = { synthesis: 0, transcription: 0 };
    this.options.logRefusals({ refused: { synthesis, transcription }, seconds });
  }
}
