// The warnings of one client's retries, one per reason at a time (src/util/quiet-repeats.ts). Every
// list of a source meets an unreachable host, an overloaded service or a gateway's 502 alike, and a
// warning per retry per list said the same thing a dozen times.
import type { Logger } from '../util/logger.ts';
import { QuietRepeats } from '../util/quiet-repeats.ts';
import type { UpstreamError } from './errors.ts';

export interface Retry {
  endpoint: string;
  /** The request's message prefix (method, endpoint, page), left out of the reason: lists share a reason, not a request. */
  where: string;
  attempt: number;
  attempts: number;
  delayMs: number;
}

/** What a retry's failure has in common with other requests' ones: its kind, status and message without the request. */
function reasonOf(err: UpstreamError, where: string): unknown[] {
  const message = err.message.startsWith(`${where}: `) ? err.message.slice(where.length + 2) : err.message;
  return [err.code, err.status ?? null, message];
}

export class RetryWarnings {
  readonly #logger: Logger;
  readonly #quiet: QuietRepeats;

  constructor(logger: Logger, quiet = new QuietRepeats()) {
    this.#logger = logger;
    this.#quiet = quiet;
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
    const note = `other retries for this reason in the next ${this.#quiet.quietSeconds} s are logged at debug`;
    this.#quiet.warn(this.#logger, reasonOf(err, retry.where), fields, `upstream request failed (${err.message}); retrying (${note})`);
  }
}
