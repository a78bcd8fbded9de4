import { ConfigError } from '../config/errors.ts';
import { pemList } from '../util/pem-list.ts';
import { positiveOption } from '../util/positive-option.ts';

export interface RetryOptions {
  /** First retry delay; doubles per attempt, ±25% jitter. Default 30 s. */
  baseDelayMs?: number;
  /** Longest delay between two attempts. Default 1 h. */
  maxDelayMs?: number;
  /** Given up (dead) when the next attempt would come later than this after the alert was created. Default 24 h. */
  maxAgeMs?: number;
  /** Given up after this many attempts. Default 30 (about 24 h with the defaults above). */
  maxAttempts?: number;
}

/** What the dispatcher's numeric options resolve to, checked once when it is created. */
export interface DispatcherSettings {
  pollIntervalMs: number;
  timeoutMs: number;
  baseDelayMs: number;
  maxDelayMs: number;
  maxAgeMs: number;
  maxAttempts: number;
  batchSize: number;
  /** How long a claimed alert is reserved for the worker that claimed it. */
  leaseMs: number;
  /** Extra CA PEMs trusted for webhook endpoints. */
  ca: string[];
}

const positive = positiveOption('alert dispatcher', ConfigError);

/** The options with their defaults; a value that is not a positive number is a configuration error. */
export function dispatcherSettings(options: {
  pollIntervalMs?: number;
  timeoutMs?: number;
  retry?: RetryOptions;
  batchSize?: number;
  ca?: string | string[];
}): DispatcherSettings {
  // Checked in this order, so the first bad option is the one named.
  const pollIntervalMs = positive('pollIntervalMs', options.pollIntervalMs, 15_000);
  const timeoutMs = positive('timeoutMs', options.timeoutMs, 30_000);
  return {
    pollIntervalMs,
    timeoutMs,
    baseDelayMs: positive('retry.baseDelayMs', options.retry?.baseDelayMs, 30_000),
    maxDelayMs: positive('retry.maxDelayMs', options.retry?.maxDelayMs, 60 * 60_000),
    maxAgeMs: positive('retry.maxAgeMs', options.retry?.maxAgeMs, 24 * 60 * 60_000),
    maxAttempts: positive('retry.maxAttempts', options.retry?.maxAttempts, 30),
    batchSize: positive('batchSize', options.batchSize, 20),
    // Long enough that a delivery in flight always finishes (or times out) before another worker may take it.
    leaseMs: timeoutMs * 2 + 30_000,
    ca: pemList(options.ca),
  };
}
