/**
 * The exponential part of a retry delay: base·2^(retry-1) for retry number `retry` (1 for the first
 * retry), at most `maxMs`. Callers add their own jitter around it.
 */
export function exponentialDelay(baseMs: number, maxMs: number, retry: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, retry - 1));
}
