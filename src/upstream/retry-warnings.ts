// The warnings of one client's retries, one per reason at a time. Every list of a source meets an
// unreachable host, an overloaded service or a gateway's 502 alike, and a warning per retry per
// list said the same thing a dozen times. The first retry for a reason is a warning; the retries
// for the same reason in the minute after it are debug lines, counted in the next warning for it.
import type { Logger } from '../util/logger.ts';
import type { UpstreamError } from './errors.ts';

/** How long a reason's warning stands for the retries after it. */
export const RETRY_WARNING_QUIET_MS = 60_000;

export interface Retry {
  endpoint: string;
  /** The request's message prefix (method, endpoint, page), left out of the reason: lists share a reason, not a request. */
  where: string;
  attempt: number;
  attempts: number;
  delayMs: number;
}

/** What a retry's failure has in common with other requests' ones: its kind, status and message without the request. */
function reasonOf(err: UpstreamError, where: string): string {
  const message = err.message.startsWith(`${where}: `) ? err.message.slice(where.length + 2) : err.message;
  return JSON.stringify([err.code, err.status ?? null, message]);
}

export class RetryWarnings {
  readonly #logger: Logger;
  readonly #quietMs: number;
  readonly #now: () => number;
  /** Per reason: until when its retries are quiet, and how many were quiet since its last warning. */
  readonly #reasons = new Map<string, { quietUntil: number; quiet: number }>();

  constructor(logger: Logger, quietMs = RETRY_WARNING_QUIET_MS, now: () => number = () => performance.now()) {
    this.#logger = logger;
    this.#quietMs = quietMs;
    this.#now = now;
  }

  /** A request failed and will be tried again after `retry.delayMs`. */
  retrying(err: UpstreamError, retry: Retry): void {
    const fields = {
      endpoint: retry.endpoint,
      where: retry.where,
      attempt: retry.attempt,
      attempts: retry.attempts,
      reason: err.code,
      status: err.status,
      delayMs: retry.delayMs,
    };
    const key = reasonOf(err, retry.where);
    const now = this.#now();
    this.#forgetPast(now);
    const seen = this.#reasons.get(key);
    if (seen && now < seen.quietUntil) {
      seen.quiet += 1;
      this.#logger.debug(fields, `upstream request failed (${err.message}); retrying`);
      return;
    }
    this.#reasons.set(key, { quietUntil: now + this.#quietMs, quiet: 0 });
    const earlier = seen?.quiet ? { quietRetries: seen.quiet } : {};
    const seconds = Math.round(this.#quietMs / 1000);
    this.#logger.warn(
      { ...fields, ...earlier },
      `upstream request failed (${err.message}); retrying (other retries for this reason in the next ${seconds} s are logged at debug)`,
    );
  }

  /** Drops the reasons long past, so a client that lives for months keeps only recent ones. */
  #forgetPast(now: number): void {
    for (const [key, seen] of this.#reasons) if (now >= seen.quietUntil + this.#quietMs) this.#reasons.delete(key);
  }
}
