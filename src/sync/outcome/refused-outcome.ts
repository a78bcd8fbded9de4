import type { Target } from '../../catalog/catalog.ts';
import type { DatabaseRefusedError } from '../../db/refused.ts';
import { zeroCounts, type TargetOutcome } from './target-outcome.ts';

/**
 * A list that could not be written because Postgres refused a connection for it: failed, with the
 * refusal as its failure (code `database_refused`), recorded by its run's settling like any other.
 */
export function refusedOutcome(target: Target, err: DatabaseRefusedError): TargetOutcome {
  return {
    target,
    status: 'failed',
    counts: zeroCounts(),
    baseline: false,
    entryCount: 0,
    pages: 0,
    durationMs: 0,
    error: err.message,
    errorCode: err.code,
    failure: err,
  };
}
