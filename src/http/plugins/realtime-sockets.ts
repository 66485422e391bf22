/**
 * What every WebSocket (synthesis and transcription) is held to: sockets per account, session
 * length, message size, idle time, ping/pong keep-alive, a client that stops reading, and a client
 * that sends messages that are not of the socket's protocol. Each limit hit is logged and counted
 * for the readiness report.
 */
import type { FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { RawData, WebSocket } from 'ws';
import type { Config } from '../../config.js';
import { AbortedError, InvalidRequestError } from '../../errors.js';
import { KEY_SUBPROTOCOL_PREFIX } from './auth.js';
import { InProcessSocketSlots, type SocketSlotStore } from '../../store/socket-slots.js';

type RealtimeLimits = Config['realtime'];

export type RealtimeKind = 'synthesis' | 'transcription';
export type RealtimeLimitName =
  | 'socketsPerAccount'
  | 'sessionLength'
  | 'messageSize'
  | 'backPressure'
  | 'idleTimeout'
  | 'unansweredPing'
  | 'inputBacklog'
  | 'malformedMessages';

/** Close codes (RFC 6455 section 7.4.1). */
export const CloseCode = { normal: 1000, goingAway: 1001, policy: 1008, tooBig: 1009, internal: 1011 } as const;

/** Options of @fastify/websocket: the message size cap, and socket errors (a client's fault) logged as such. */
export function realtimeSocketOptions(limits: RealtimeLimits) {
  return {
    options: {
      maxPayload: limits.maxMessageBytes,
      // The first subprotocol offered that does not carry a key (OpenAI's clients offer "realtime" first): a key is never echoed back.
      handleProtocols: (protocols: Set<string>) => [...protocols].find((p) => !p.startsWith(KEY_SUBPROTOCOL_PREFIX)) ?? false,
    },
    errorHandler(error: Error, socket: WebSocket, request: FastifyRequest) {
      request.log.info({ reason: error.message }, 'websocket closed on a socket error');
      socket.terminate();
    },
  };
}

/** `?timeout=` in seconds → idle timeout in ms, within 1 s and limits.maxIdleTimeoutMs. */
export function idleTimeoutFromQuery(value: string | undefined, limits: RealtimeLimits): number {
  if (value === undefined) return limits.idleTimeoutMs;
  const max = Math.floor(limits.maxIdleTimeoutMs / 1000);
  const seconds = Number(value);
  if (!/^[0-9]+$/.test(value) || seconds < 1 || seconds > max) throw new InvalidRequestError(`timeout must be between 1 and ${max}`);
  return seconds * 1000;
}

/** Asks the database which keys are still active. */
export interface KeyCheck {
  stillActive(keyIds: readonly string[]): Promise<Set<string>>;
  /** The check failed (the database did not answer): sockets stay open until the next check. */
  onError(err: unknown): void;
}

export class RealtimeSockets {
  private readonly open: Record<RealtimeKind, number> = { synthesis: 0, transcription: 0 };
  private readonly sessions = new Set<RealtimeSession>();
  private readonly keyChecker: NodeJS.Timeout | undefined;
  private checking = false;
  private readonly limitHits: Record<RealtimeLimitName, number> = {
    socketsPerAccount: 0,
    sessionLength: 0,
    messageSize: 0,
    backPressure: 0,
    idleTimeout: 0,
    unansweredPing: 0,
    inputBacklog: 0,
    malformedMessages: 0,
  };

  /** Told how long each admitted session stayed open (metrics). */
  sessionEnded?: (kind: RealtimeKind, seconds: number) => void;

  /**
   * With `keys`, the keys of open sockets are checked every third of limits.socketLeaseMs: a
   * socket whose key was revoked (on any node: the check reads the database) is closed with 1008.
   */
  constructor(
    readonly limits: RealtimeLimits,
    private readonly slots: SocketSlotStore = new InProcessSocketSlots(),
    private readonly keys?: KeyCheck,
  ) {
    if (keys) {
      this.keyChecker = setInterval(() => void this.closeRevoked(), Math.max(100, Math.floor(limits.socketLeaseMs / 3)));
      this.keyChecker.unref();
    }
  }

  private async closeRevoked(): Promise<void> {
    if (this.checking || this.sessions.size === 0 || !this.keys) return;
    this.checking = true;
    try {
      const ids = [...new Set([...this.sessions].map((s) => s.request.keyId).filter((id) => id !== undefined))];
      const active = await this.keys.stillActive(ids);
      for (const session of this.sessions) {
        if (session.request.keyId === undefined || active.has(session.request.keyId)) continue;
        session.request.log.info({ accountId: session.request.accountId, keyId: session.request.keyId }, 'websocket closed: its API key was revoked');
        session.close(CloseCode.policy, 'API key revoked');
      }
    } catch (err) {
      this.keys.onError(err);
    } finally {
      this.checking = false;
    }
  }

  /** Stops the key checks (the server is closing). */
  close(): void {
    clearInterval(this.keyChecker);
  }

  /** For the readiness report (`open`: this node's sockets). */
  report(): { open: Record<RealtimeKind, number>; limitHits: Record<RealtimeLimitName, number> } {
    return { open: { ...this.open }, limitHits: { ...this.limitHits } };
  }

  hit(limit: RealtimeLimitName, request: FastifyRequest, detail: object = {}): void {
    this.limitHits[limit]++;
    request.log.warn({ limit, accountId: request.accountId, ...detail }, `websocket limit reached: ${limit}`);
  }

  /**
   * Takes charge of a newly upgraded socket: takes one of its account's slots (with none left it
   * is closed with 1008 and null returned), and starts its timers. Call it before any await: the
   * socket stops reading until the session's receive() and a resume(), and what came with the
   * upgrade waits for the receiver.
   */
  async admit(
    socket: WebSocket,
    request: FastifyRequest,
    kind: RealtimeKind,
    idleTimeoutMs: number,
    /** The message sent before an idle socket is closed, given the idle seconds (none: closed without one). */
    idleMessage?: (seconds: number) => object,
  ): Promise<RealtimeSession | null> {
    const inbox = new Inbox(socket);
    const slot = { id: randomUUID(), accountId: request.accountId, kind };
    const max = this.limits.maxSocketsPerAccount;
    if (!(await this.slots.take(slot, max))) {
      this.hit('socketsPerAccount', request, { max });
      inbox.closing(socket);
      socket.close(CloseCode.policy, `too many open sockets for this account (at most ${max})`);
      return null;
    }
    // Gone while the slot was taken: its close event has passed.
    if (socket.readyState !== socket.OPEN) {
      this.slots.release(slot.id);
      return null;
    }
    this.open[kind]++;
    const openedAt = performance.now();
    const session: RealtimeSession = new RealtimeSession(
      socket,
      request,
      this,
      idleTimeoutMs,
      inbox,
      () => {
        this.slots.release(slot.id);
        this.open[kind]--;
        this.sessions.delete(session);
        this.sessionEnded?.(kind, (performance.now() - openedAt) / 1000);
      },
      idleMessage,
    );
    this.sessions.add(session);
    return session;
  }
}

/** Client messages that arrive before their receiver is ready, held in order. */
class Inbox {
  private readonly early: [RawData, boolean][] = [];
  private receiver: ((data: RawData, isBinary: boolean) => void) | undefined;

  constructor(socket: WebSocket) {
    socket.on('message', (data, isBinary) => (this.receiver ? this.receiver(data, isBinary) : this.early.push([data, isBinary])));
    socket.pause();
  }

  receive(receiver: (data: RawData, isBinary: boolean) => void): void {
    this.receiver = receiver;
    for (const [data, isBinary] of this.early.splice(0)) receiver(data, isBinary);
  }

  /**
   * The server is closing the socket: what the client sends until its close frame is dropped, and
   * the socket reads again (if it had stopped), so that close frame ends the handshake.
   */
  closing(socket: WebSocket): void {
    this.early.length = 0;
    this.receiver = () => undefined;
    if (socket.isPaused) socket.resume();
  }
}

const DRAIN_POLL_MS = 10;

/** One admitted socket: its timers, its keep-alive, and sends that wait while the client is not reading. */
export class RealtimeSession {
  /** Aborts when the socket closes, for whatever reason: work for it stops. */
  readonly closed = new AbortController();
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly sessionTimer: NodeJS.Timeout;
  private readonly pinger: NodeJS.Timeout;
  private answeredPing = true;
  /** Malformed messages counted in the second that began at malformedSince (performance.now()). */
  private malformedInSecond = 0;
  private malformedSince = 0;

  constructor(
    readonly socket: WebSocket,
    readonly request: FastifyRequest,
    private readonly sockets: RealtimeSockets,
    private readonly idleTimeoutMs: number,
    private readonly inbox: Inbox,
    onClose: () => void,
    private readonly idleMessage?: (seconds: number) => object,
  ) {
    const { limits } = sockets;
    this.sessionTimer = setTimeout(() => {
      sockets.hit('sessionLength', request, { maxSessionSeconds: limits.maxSessionSeconds });
      this.close(CloseCode.policy, `session length limit of ${limits.maxSessionSeconds} s reached`);
    }, limits.maxSessionSeconds * 1000);
    this.pinger = setInterval(() => {
      if (!this.answeredPing) {
        sockets.hit('unansweredPing', request, { pingIntervalMs: limits.pingIntervalMs });
        socket.terminate();
        return;
      }
      this.answeredPing = false;
      socket.ping();
    }, limits.pingIntervalMs);
    socket.on('pong', () => (this.answeredPing = true));
    socket.on('message', () => this.touch());
    socket.on('error', (err: Error & { code?: string }) => {
      if (err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') sockets.hit('messageSize', request, { maxMessageBytes: limits.maxMessageBytes });
    });
    socket.once('close', () => {
      clearTimeout(this.sessionTimer);
      clearTimeout(this.idleTimer);
      clearInterval(this.pinger);
      this.closed.abort();
      onClose();
    });
    this.touch();
  }

  /**
   * Hands client messages to `receiver`, first those that came before. The socket reads again
   * only on resume() (a receiver that is not ready yet may wait).
   */
  receive(receiver: (data: RawData, isBinary: boolean) => void): void {
    this.inbox.receive(receiver);
  }

  get isOpen(): boolean {
    return this.socket.readyState === this.socket.OPEN;
  }

  /** Something moved (a client message, or an answer): the idle countdown starts again. */
  touch(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      this.sockets.hit('idleTimeout', this.request, { idleTimeoutMs: this.idleTimeoutMs });
      const seconds = Math.round(this.idleTimeoutMs / 1000);
      if (this.idleMessage && this.isOpen) this.socket.send(JSON.stringify(this.idleMessage(seconds)));
      this.close(CloseCode.normal, `idle for ${seconds} s`);
    }, this.idleTimeoutMs);
  }

  /**
   * Counts a message that is not of the socket's protocol (not JSON, not an object, a binary frame
   * where text is expected, an unknown type): no working client sends them in numbers, a flood of
   * them is only work for the server. Returns the sentence to send the client, in the route's error
   * shape, when this one is over limits.maxMalformedMessagesPerSecond within a second; the route
   * then sends it instead of the message's own error, and calls closeMalformed().
   */
  countMalformed(): string | undefined {
    const now = performance.now();
    if (now - this.malformedSince >= 1000) {
      this.malformedSince = now;
      this.malformedInSecond = 0;
    }
    const max = this.sockets.limits.maxMalformedMessagesPerSecond;
    if (++this.malformedInSecond <= max) return undefined;
    return `more than ${max} malformed messages within a second: the socket is closed`;
  }

  /** Closes the socket after countMalformed() said so (once the route has sent its error: a close goes after what was sent). */
  closeMalformed(): void {
    if (!this.isOpen) return;
    this.sockets.hit('malformedMessages', this.request, { maxMalformedMessagesPerSecond: this.sockets.limits.maxMalformedMessagesPerSecond });
    this.close(CloseCode.policy, 'too many malformed messages');
  }

  close(code: number, reason: string): void {
    if (!this.isOpen) return;
    // A close reason is at most 123 bytes (RFC 6455 5.5: control frames carry ≤ 125).
    this.socket.close(code, Buffer.from(reason).subarray(0, 123).toString());
    this.inbox.closing(this.socket);
  }

  /**
   * Sends one text message. While more than limits.maxBufferedBytes wait for the client, the
   * caller waits too (so its producer pauses); after writeStallMs of that the socket is closed
   * and AbortedError thrown.
   */
  async send(message: object, writeStallMs: number): Promise<void> {
    if (!this.isOpen) throw new AbortedError();
    this.socket.send(JSON.stringify(message));
    // A socket that is still answering is not idle (a long synthesis needs no client message).
    this.touch();
    const { maxBufferedBytes } = this.sockets.limits;
    if (this.socket.bufferedAmount <= maxBufferedBytes) return;
    const since = Date.now();
    while (this.isOpen && this.socket.bufferedAmount > maxBufferedBytes) {
      if (Date.now() - since > writeStallMs) {
        this.sockets.hit('backPressure', this.request, { bufferedBytes: this.socket.bufferedAmount });
        this.close(CloseCode.policy, 'client is not reading its messages');
        // Closing waits for the buffered bytes; a client that reads nothing would hold them.
        setTimeout(() => this.socket.terminate(), 1_000).unref();
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS));
    }
    if (!this.isOpen) throw new AbortedError();
  }
}
