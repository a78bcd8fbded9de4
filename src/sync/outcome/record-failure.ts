import type { Target } from '../../catalog/targets.ts';
import type { Database, Queryable } from '../../db/database.ts';
import { alertFor } from '../../alerts/alert-row.ts';
import { wantsAlert, writeAlert } from '../../alerts/outbox.ts';
import { zeroCounts } from '../load/apply-types.ts';
import { isUnavailable } from './failure.ts';
import { clockAndLastSnapshots, insertSnapshot, SNAPSHOT_ERROR_BYTES, snapshotInRun, targetParams } from '../sql.ts';
import { storableText } from '../collect/storable-text.ts';
import { cutToBytes } from '../../util/bounded-text.ts';
import { lockTarget } from '../target/target-lock.ts';
import { isFailedOutcome, type TargetOutcome } from './target-outcome.ts';
import type { FailureLog } from './failure-log.ts';

/**
 * Records the list failure an outcome carries, once its caller has decided not to retry it, and
 * returns the outcome with the snapshot's id. An outcome without a failure is returned as it is.
 */
export async function recordOutcomeFailure(db: Database, outcome: TargetOutcome, runId: number | null, failures: FailureLog): Promise<TargetOutcome> {
  if (!isFailedOutcome(outcome) || outcome.snapshotId !== undefined) return outcome;
  const { failure, target } = outcome;
  failures.failed(target, failure);
  return { ...outcome, snapshotId: await recordFailure(db, target, runId, failure, outcome.durationMs) };
}

/**
 * Records a failed (or unavailable) fetch as a snapshot row and, when the target was not already
 * failing, a `failed` alert. The target's entries are not touched: its last good data stays current.
 */
export async function recordFailure(db: Database, target: Target, runId: number | null, err: Error & { code?: string }, durationMs: number): Promise<number> {
  return (await recordFailureUnlessDone(db, target, runId, err, durationMs, false))!;
}

/** Whether the run already has a snapshot of the target (it ran to the end, ok or not). */
export async function syncedInRun(q: Queryable, runId: number, target: Target): Promise<boolean> {
  const { rows } = await q.query(snapshotInRun, [runId, ...targetParams(target)]);
  return rows.length > 0;
}

/**
 * recordFailure for a sweep that may race other workers: records nothing (and returns undefined)
 * when the run already has a snapshot of the target, checked under the target's lock.
 */
export async function recordFailureUnlessDone(
  db: Database,
  target: Target,
  runId: number | null,
  err: Error & { code?: string },
  durationMs: number,
  checkDone = true,
): Promise<number | undefined> {
  const env = target.source.environment;
  const listKey = target.list.key;
  const status = isUnavailable(err) ? 'unavailable' : 'failed';
  // Storable even when the error quotes the data that Postgres refused; bounded in bytes, as it
  // quotes the upstream's answer: the failed alert says what the snapshot holds.
  const message = storableText(cutToBytes(err.message.split('\n')[0]!, SNAPSHOT_ERROR_BYTES));
  return db.transaction(async (tx) => {
    await lockTarget(tx, env, listKey, target.variant);
    if (checkDone && runId !== null && (await syncedInRun(tx, runId, target))) return undefined;
    const { last } = await clockAndLastSnapshots(tx, target);
    const snapshotId = await insertSnapshot(tx, target, {
      runId,
      status,
      changed: false,
      counts: zeroCounts(),
      contentHash: null,
      entryCount: null,
      fields: null,
      pages: null,
      durationMs,
      replacedValues: 0,
      servedDigest: null,
      nonconforming: 0,
      schemaAccepted: false,
      error: message,
      errorCode: err.code ?? 'error',
    });
    const alreadyFailing = last?.status === status;
    if (!alreadyFailing && wantsAlert(target.source, 'failed', listKey)) {
      await writeAlert(tx, alertFor(target, 'failed', snapshotId, { status, error_code: err.code ?? 'error', error: message }));
    }
    return snapshotId;
  });
}
