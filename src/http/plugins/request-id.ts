import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** A client-chosen id is kept when it is at most 128 of [A-Za-z0-9._-]. */
const CLIENT_ID = /^[A-Za-z0-9._-]{1,128}$/;

export function generateRequestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  if (typeof given === 'string' && CLIENT_ID.test(given)) return given;
  return `req_${randomUUID().replace(/-/g, '')}`;
}
