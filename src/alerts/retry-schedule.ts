import { exponentialDelay } from '../util/backoff.ts';
import type { DispatcherSettings } from './dispatcher-settings.ts';
import type { AlertRecord } from './format.ts';

type RetrySettings = Pick<DispatcherSettings, 'baseDelayMs' | 'maxDelayMs' | 'maxAgeMs' | 'maxAttempts'>;

/** The delay after failed attempt number `attempt`: doubling from baseDelayMs, at most maxDelayMs, ±25% jitter. */
function alertBackoff(settings: RetrySettings, attempt: number): number {
  const exp = exponentialDelay(settings.baseDelayMs, settings.maxDelayMs, attempt);
  return Math.max(1, Math.round(exp * (0.75 + Math.random() * 0.5)));
}

/**
 * When a failed alert is tried again: after the backoff, or the receiver's Retry-After when that
 * is longer (at most twice maxDelayMs). Dead when it was the last attempt or the next one would
 * fall past the alert's maxAgeMs.
 */
export function nextAttempt(settings: RetrySettings, alert: AlertRecord, retryAfterMs: number | undefined, at: number): { dead: boolean; nextAt: number } {
  const delay = Math.min(settings.maxDelayMs * 2, Math.max(alertBackoff(settings, alert.attempts), retryAfterMs ?? 0));
  const nextAt = at + delay;
  const dead = alert.attempts >= settings.maxAttempts || nextAt > alert.retriesFrom.getTime() + settings.maxAgeMs;
  return { dead, nextAt };
}
