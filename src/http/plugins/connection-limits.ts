/**
 * Bounds on what one connection may hold (config.http): time to send headers, time to send the
 * body, idle keep-alive time, time a response may stall unread, and the number of connections, in
 * all and per client address. Node's server enforces the first three; the body deadline is
 * enforced here so that it answers 408 with the route family's error body.
 */
import type { Socket } from 'node:net';
import { PassThrough, type Readable } from 'node:stream';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { Config } from '../../config.js';
import { RequestTimeoutError } from '../../errors.js';
import { createAddressMatcher } from '../../net/address-policy.js';

type HttpLimits = Config['http'];

/**
 * A request's URL and headers together at most (Node answers 431 and closes past it). Node's 16 KiB
 * default cannot carry the live socket's `keywords` list of up to 10,000 names (about 150 KB
 * URL-encoded); each connection still holds at most this much before its headers are complete.
 */
export const MAX_REQUEST_HEAD_BYTES = 256 * 1024;

/** Fastify/Node server options for these limits. */
export function httpServerOptions(limits: HttpLimits): Partial<FastifyServerOptions> {
  const { headersTimeoutMs, bodyTimeoutMs, keepAliveTimeoutMs } = limits;
  return {
    // Node answers a bare 408 past this: a backstop behind the body deadline below, never first.
    requestTimeout: headersTimeoutMs + bodyTimeoutMs + 5_000,
    keepAliveTimeout: keepAliveTimeoutMs,
    // No inactivity timeout while a handler works: a long transcription writes nothing for minutes.
    connectionTimeout: 0,
    // request.ip is X-Forwarded-For's client only when the peer is a listed proxy (proxy-addr walks the chain).
    trustProxy: limits.trustedProxies.length > 0 ? [...limits.trustedProxies] : false,
    http: {
      headersTimeout: headersTimeoutMs,
      maxHeaderSize: MAX_REQUEST_HEAD_BYTES,
      // How often Node looks for connections past headersTimeout/requestTimeout (default 30 s).
      connectionsCheckingInterval: Math.min(5_000, Math.max(100, Math.floor(Math.min(headersTimeoutMs, bodyTimeoutMs) / 4))),
    },
  } as Partial<FastifyServerOptions>;
}

/** The body stream of each request that went through the body deadline, to tell if it was all read. */
const unreadBodies = new WeakMap<object, Readable>();

/** Share of maxConnections open at which idle keep-alive connections are cut short. */
export const PRESSURE_FRACTION = 0.8;

/** One warning per kind of refusal per this long: a flood must not flood the log too. */
const REFUSAL_LOG_EVERY_MS = 10_000;

export function enforceConnectionLimits(app: FastifyInstance, limits: HttpLimits): void {
  const server = app.server;
  server.maxConnections = limits.maxConnections;
  const lastLog = { total: 0, perAddress: 0 };
  const warn = (kind: keyof typeof lastLog, detail: object, msg: string) => {
    const now = Date.now();
    if (now - lastLog[kind] < REFUSAL_LOG_EVERY_MS) return;
    lastLog[kind] = now;
    app.log.warn(detail, msg);
  };
  server.on('drop', () => warn('total', { maxConnections: limits.maxConnections }, 'connection refused: too many open connections'));

  // Per address: a proxy listed in trustedProxies carries many clients and is exempt.
  const isProxy = createAddressMatcher(limits.trustedProxies);
  const perAddress = new Map<string, number>();
  /** Connections that answered a request and wait for the next one (keep-alive). */
  const idle = new Set<Socket>();
  let open = 0;
  const pressureAt = Math.max(1, Math.floor(limits.maxConnections * PRESSURE_FRACTION));
  const underPressure = () => open >= pressureAt;
  const applyPressure = () => {
    const pressed = underPressure();
    server.keepAliveTimeout = pressed ? Math.min(limits.pressureKeepAliveTimeoutMs, limits.keepAliveTimeoutMs) : limits.keepAliveTimeoutMs;
    // Connections idle already keep the timeout they were given: shorten theirs too.
    if (pressed) for (const socket of idle) socket.setTimeout(server.keepAliveTimeout);
  };

  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address !== undefined && !isProxy(address)) {
      const held = perAddress.get(address) ?? 0;
      if (held >= limits.maxConnectionsPerAddress) {
        warn('perAddress', { address, maxConnectionsPerAddress: limits.maxConnectionsPerAddress }, 'connection refused: too many open connections from one address');
        socket.destroy();
        return;
      }
      perAddress.set(address, held + 1);
      socket.once('close', () => {
        const left = (perAddress.get(address) ?? 1) - 1;
        if (left > 0) perAddress.set(address, left);
        else perAddress.delete(address);
      });
    }
    open++;
    socket.once('close', () => {
      open--;
      idle.delete(socket);
      if (!underPressure()) applyPressure();
    });
    applyPressure();
  });
  server.on('request', (req: { socket: Socket }, res: { once(event: 'finish', listener: () => void): void }) => {
    idle.delete(req.socket);
    res.once('finish', () => {
      if (req.socket.destroyed) return;
      idle.add(req.socket);
      // Node has just given the socket keepAliveTimeout; under pressure that is the short one.
      if (underPressure()) req.socket.setTimeout(server.keepAliveTimeout);
    });
  });

  // The body must have arrived bodyTimeoutMs after the route began to read it: a body trickling
  // in a byte at a time is cut with 408 and the connection closed.
  app.addHook('preParsing', async (request, reply, payload) => {
    if (request.raw.complete) return payload;
    const guarded = new PassThrough();
    const source = payload as Readable;
    source.pipe(guarded);
    source.on('error', (err) => guarded.destroy(err));
    const timer = setTimeout(() => {
      source.unpipe(guarded);
      source.pause();
      reply.header('Connection', 'close');
      reply.raw.once('finish', () => request.raw.socket?.destroy());
      guarded.destroy(new RequestTimeoutError(`Request body was not received within ${limits.bodyTimeoutMs / 1000} s`));
    }, limits.bodyTimeoutMs);
    timer.unref();
    const stop = () => clearTimeout(timer);
    source.once('end', stop);
    source.once('close', stop);
    reply.raw.once('close', stop);
    unreadBodies.set(request.raw, source);
    // Answered without reading the whole body (an unsupported type, a refusal before parsing): the
    // pipe holds the rest unread, and Node, seeing the body consumed, would neither discard it nor
    // read the connection's next request, so that request would hang. The connection closes instead
    // (the onSend hook below has told the client so, or it would send its next request into it),
    // lingering while the rest arrives (lingering-close.ts): it is let flow and dropped.
    reply.raw.once('finish', () => {
      if (source.readableEnded) return;
      source.unpipe(guarded);
      source.resume();
    });
    return guarded;
  });

  // Once a response is being written, bytes that stop moving for writeStallTimeoutMs mean a
  // client that does not read: the socket is destroyed rather than held with the response in
  // memory. Node replaces this timeout with keepAliveTimeout when the response has gone out.
  app.addHook('onSend', async (request, reply) => {
    request.raw.socket?.setTimeout(limits.writeStallTimeoutMs);
    const body = unreadBodies.get(request.raw);
    if (body && !body.readableEnded) reply.header('Connection', 'close');
  });
}
