/**
 * The HTTP side of metrics and traces, added to the app before its routes: per request a count
 * and a duration by route family, method and status class, refusals by reason, and (when tracing)
 * a server span, the request id as its attribute, active while the request's handler runs so that
 * inference tasks become its children. The main port's `/metrics` (behind metrics.token) lives
 * here too.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ParleyMetrics } from './metrics.js';
import type { Tracing } from './tracing.js';

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);

/** The route family of a route pattern: a bounded label (never the path itself). */
export function routeFamily(route: string | undefined): string {
  if (route === undefined) return 'unmatched';
  if (route.startsWith('/api/v1/stt')) return 'stt';
  if (route.startsWith('/api/v1')) return 'speech';
  if (route.startsWith('/waves/v1')) return 'waves';
  if (route.startsWith('/v1/')) return 'openai';
  if (route === '/healthz' || route === '/readyz' || route === '/livez') return 'health';
  if (route === '/metrics') return 'metrics';
  return 'other';
}

/** Why a response refused the request, when it did: 429 rate limits, 503 admission (queues full, inference restarting). */
function refusal(status: number): string | undefined {
  if (status === 429) return 'rate_limit';
  if (status === 503) return 'overloaded';
  return undefined;
}

interface Traced {
  span: Span;
  context: Context;
}

const traced = new WeakMap<FastifyRequest, Traced>();

export function instrumentHttp(app: FastifyInstance, options: { metrics?: ParleyMetrics; tracing?: Tracing; metricsToken?: string }): void {
  const { metrics, tracing, metricsToken } = options;
  if (tracing) {
    app.addHook('onRequest', (request, _reply, done) => {
      const parent = propagation.extract(ROOT_CONTEXT, request.headers);
      const route = request.routeOptions.url;
      const span = tracing.tracer.startSpan(
        `${request.method} ${route ?? 'unmatched'}`,
        { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method, 'http.route': route ?? '', 'parley.request_id': request.id } },
        parent,
      );
      const entry = { span, context: trace.setSpan(parent, span) };
      traced.set(request, entry);
      context.with(entry.context, done);
    });
    // The body arrives on the socket's events, outside the request's context: enter it again.
    app.addHook('preHandler', (request, _reply, done) => {
      const ctx = traced.get(request)?.context;
      if (ctx) context.with(ctx, done);
      else done();
    });
    app.addHook('onResponse', (request, reply, done) => {
      const span = traced.get(request)?.span;
      if (span) {
        span.setAttribute('http.response.status_code', reply.statusCode);
        if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      }
      done();
    });
  }
  if (metrics) {
    // One child per label set, found by a string key: cheaper than the label object prom-client hashes per call.
    const children = new Map<string, { requests: { inc(): void }; duration: { observe(seconds: number): void } }>();
    app.addHook('onResponse', (request, reply, done) => {
      const status = reply.statusCode;
      const family = routeFamily(request.routeOptions.url);
      const method = METHODS.has(request.method) ? request.method : 'other';
      const statusClass = `${Math.floor(status / 100)}xx`;
      const key = `${family} ${method} ${statusClass}`;
      let child = children.get(key);
      if (!child) {
        const labels = { family, method, status_class: statusClass };
        child = { requests: metrics.httpRequests.labels(labels), duration: metrics.httpDuration.labels(labels) };
        children.set(key, child);
      }
      child.requests.inc();
      // Fastify's own clock from the request's arrival.
      child.duration.observe(reply.elapsedTime / 1000);
      const reason = refusal(status);
      if (reason) metrics.refusals.inc({ reason });
      done();
    });
    // Refusals answered before the framework saw the request: no hook above runs for them.
    if (app.hasDecorator('admission')) {
      app.admission.onRefusal((refused) => {
        if (!refused.atWire) return;
        const method = METHODS.has(refused.method) ? refused.method : 'other';
        metrics.httpRequests.inc({ family: routeFamily(refused.path), method, status_class: '5xx' });
        metrics.refusals.inc({ reason: 'overloaded' });
      });
    }
  }
  if (metrics && metricsToken) {
    const wanted = createHash('sha256').update(metricsToken).digest();
    app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
      const given = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1] ?? '';
      if (!timingSafeEqual(createHash('sha256').update(given).digest(), wanted)) {
        return reply.code(401).header('www-authenticate', 'Bearer').send({ error: 'The metrics need the metrics token as a bearer token' });
      }
      const { body, contentType } = await metrics.scrape();
      return reply.type(contentType).send(body);
    });
  }
}
