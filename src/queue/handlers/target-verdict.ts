import { isUnavailable } from '../../sync/outcome/failure.ts';
import { isFailedOutcome, type FailedOutcome, type TargetOutcome } from '../../sync/outcome/target-outcome.ts';
import { UpstreamError } from '../../upstream/errors.ts';

/** Times a job may be put back by a 429 before it is failed as rate limited. */
const RATE_LIMIT_TIMES = 10;
/** Retry-After when the service sent none with its 429. */
const DEFAULT_RATE_LIMIT_MS = 60_000;

/** What the worker does with a target job whose list failed. */
type FailureVerdict =
  /** Rate limited: the source cools down and the job is put back, using no attempt. */
  | { kind: 'wait'; ms: number }
  /** A transient failure with attempts left: BullMQ retries it, and nothing is recorded. */
  | { kind: 'retry' }
  /** The list is not served here (404): recorded as unavailable, an answer rather than an error; the job completes. */
  | { kind: 'record' }
  /** Retrying cannot heal it (credentials, TLS, a 4xx, a broken answer, the last attempt): recorded, the job fails. */
  | { kind: 'fail' };

/** What the worker does with a target job once its sync has an outcome: a failure's verdict carries the failed outcome. */
export type Verdict =
  /** Synced (changed, unchanged or held): the job completes. */
  { kind: 'done' } | (FailureVerdict & { failed: FailedOutcome });

/** The one policy for a target job's outcome. */
export function verdictOn(outcome: TargetOutcome, attempt: { last: boolean; rateLimited: number }): Verdict {
  if (!isFailedOutcome(outcome)) return { kind: 'done' };
  const { failure } = outcome;
  const upstream = failure instanceof UpstreamError ? failure : undefined;
  if (upstream?.status === 429 && attempt.rateLimited < RATE_LIMIT_TIMES) {
    return { kind: 'wait', ms: upstream.retryAfterMs ?? DEFAULT_RATE_LIMIT_MS, failed: outcome };
  }
  if (upstream?.retryable && upstream.status !== 429 && !attempt.last) return { kind: 'retry', failed: outcome };
  return { kind: isUnavailable(failure) ? 'record' : 'fail', failed: outcome };
}
