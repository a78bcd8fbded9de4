import { setTimeout as delay } from 'node:timers/promises';
import { exponentialDelay } from '../util/backoff.ts';

export interface RetryPolicy {
  /** Total tries of one request, the first included. */
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited for: the error goes to the caller with retryAfterMs. */
  maxRetryAfterMs: number;
}

export const defaultRetryPolicy: RetryPolicy = {
  attempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 120_000,
};

/** Statuses that say "try again": rate limit, and the transient server-side failures. */
export const retryableStatuses = new Set([429, 500, 502, 503, 504]);

/** Exponential backoff with full jitter: uniform in [0, min(max, base·2^(retry-1))]. */
export function backoffDelay(policy: RetryPolicy, retry: number, random: () => number = Math.random): number {
  return Math.floor(random() * exponentialDelay(policy.baseDelayMs, policy.maxDelayMs, retry));
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now: number = Date.now()): number | undefined {
  const raw = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!raw) return undefined;
  if (/^\d+$/.test(raw)) return Number(raw) * 1000;
  const date = Date.parse(raw);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Waits, unless the caller's signal aborts first (then rejects with the signal's reason). */
export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0) {
    signal?.throwIfAborted();
    return;
  }
  try {
    await delay(ms, undefined, signal ? { signal } : undefined);
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    throw err;
  }
}
