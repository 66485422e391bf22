/**
 * Delay before delivery attempt `attempt + 1`, after attempt `attempt` (1-based) failed:
 * exponential (base·2^(attempt-1)), capped, with "equal jitter" — a random point in the upper
 * half of the window. The jitter spreads retries of many jobs that failed together (a receiver
 * that was down) so they do not all hit it again at the same instant (thundering herd); keeping
 * the lower half means a retry never comes back almost immediately.
 * Defaults (base 2 s, cap 5 min, 10 retries) spread 11 attempts over roughly 7-14 minutes.
 */
export function calculateDelay(attempt: number, baseMs: number, capMs: number, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(attempt, 1) - 1, 30);
  const window = Math.min(capMs, baseMs * 2 ** exponent);
  return Math.round(window / 2 + random() * (window / 2));
}
