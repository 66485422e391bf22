/**
 * Headers that make a browser safe with what the server sends. Every response: no MIME sniffing
 * (a JSON error echoing input must never run as a page). Every HTML page (the API docs at /docs,
 * the playground at /): a Content-Security-Policy allowing only the server's own files, no
 * framing by any other page (clickjacking a page that holds a key), no referrer to other sites.
 * A page that set its own policy keeps it; the others get DEFAULT_PAGE_POLICY. Over TLS, every
 * response carries HSTS.
 */
import type { FastifyInstance } from 'fastify';

const policy = (directives: string[]) => directives.join('; ');

/** Own files only: no inline script, no other origin, no plugins, no framing. */
export const DEFAULT_PAGE_POLICY = policy([
  "default-src 'self'",
  "img-src 'self' data:",
  // Audio made or recorded in the playground plays from blob: URLs (the player, the downloads).
  "media-src 'self' blob:",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
]);

/**
 * The API docs (Swagger UI): its scripts are files of its own, but its components set style
 * attributes, so inline styles are allowed there (styles cannot run code). "Try it out" calls
 * this origin only.
 */
export const DOCS_PAGE_POLICY = policy([
  "default-src 'self'",
  "img-src 'self' data:",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
]);

export function useSecurityHeaders(app: FastifyInstance, options: { docsPrefix: string; hsts?: string }): void {
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('X-Content-Type-Options', 'nosniff');
    // Served over TLS: browsers keep to HTTPS for this host from now on.
    if (options.hsts) reply.header('Strict-Transport-Security', options.hsts);
    const type = String(reply.getHeader('content-type') ?? '');
    if (!type.startsWith('text/html')) return payload;
    if (!reply.hasHeader('content-security-policy')) {
      const isDocs = request.url === options.docsPrefix || request.url.startsWith(`${options.docsPrefix}/`);
      reply.header('Content-Security-Policy', isDocs ? DOCS_PAGE_POLICY : DEFAULT_PAGE_POLICY);
    }
    // For browsers without CSP level 2 frame-ancestors.
    reply.header('X-Frame-Options', 'DENY');
    if (!reply.hasHeader('referrer-policy')) reply.header('Referrer-Policy', 'no-referrer');
    return payload;
  });
}
