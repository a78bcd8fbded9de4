// A list's reason as a run's error quotes it (src/sync/run/run-error.ts), and whether it does:
// where the run's error states a cause that several lists share, `refsync status` and the run's
// page point their rows to it instead of repeating it on each.
import { cutToChars } from '../util/bounded-text.ts';
import { withoutRequest } from '../util/failure-cause.ts';

/** The most of one reason a run's error quotes: a TLS reason and its fix are about 130 characters. */
const REASON_CHARS = 300;

/** The reason as the run's error quotes it: its first line, cut to REASON_CHARS. */
export function runReason(error: string): string {
  return cutToChars(error.split('\n')[0]!, REASON_CHARS);
}

/** Whether the run's error states this list's reason: whole, or its cause where several lists' differ by their request (src/util/failure-cause.ts). */
export function statedInRunError(runError: string | null | undefined, error: string | null): boolean {
  return Boolean(runError && error && runError.includes(runReason(withoutRequest(error))));
}
