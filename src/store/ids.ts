import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

const base62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `length` random base62 characters (rejection sampling, so every character is uniform). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248 && out.length < length) out += base62[b % 62];
    }
  }
  return out;
}

/** Prefixed id, e.g. newId('voice', 10) → voice_3fZ0aB9xQq. */
export function newId(prefix: string, length = 16): string {
  return `${prefix}_${randomBase62(length)}`;
}

export function nowIso(clock: () => number = Date.now): string {
  return new Date(clock()).toISOString();
}

/** `<host>-<pid>-<random>`: unique per process start, readable in the tables (locks, leases) when debugging. */
export function newNodeId(): string {
  return `${hostname()}-${process.pid}-${randomBytes(4).toString('hex')}`;
}
