// What one sync of a target ends in, how a failed one reaches the log and what its failure leaves
// recorded, and the result types the ways of applying a list share.
import { type Target, listVariant } from '../../catalog/catalog.ts';
import type { ErrorCode, ListFailure } from '../../util/error-codes.ts';
import { groupAlike } from '../../util/alike.ts';
import { causeOf, sharedMessage } from '../../util/failure-cause.ts';
import type { Logger } from '../../util/logger.ts';
import type { QuietRepeats } from '../../util/quiet-repeats.ts';
import type { Database, Queryable } from '../../db/database.ts';
import { alertFor } from '../../alerts/alert-row.ts';
import { wantsAlert, writeAlert } from '../../alerts/outbox.ts';
import { isUnavailable } from './failure.ts';
import { clockAndLastSnapshots, insertSnapshot, SNAPSHOT_ERROR_BYTES, snapshotInRun, targetParams } from '../sql.ts';
import { storableText } from '../collect/collect.ts';
import { cutToBytes } from '../../util/bounded-text.ts';
import { lockTarget } from '../target/target-lock.ts';

/** What one sync of a target came to, told apart by its status: what syncTarget returns and its caller settles. */
export type TargetOutcome = UnchangedOutcome | ChangedOutcome | HeldOutcome | FailedOutcome;

export type TargetStatus = TargetOutcome['status'];

/** What every outcome says, whatever its status. */
interface OutcomeFacts {
  target: Target;
  /** The snapshot written; for a failure, once the caller has recorded it (recordOutcomeFailure, below). */
  snapshotId?: number;
  counts: Record<ChangeKind, number>;
  /** The first snapshot of a target: its rows are opened, but it records no changes or alerts. */
  baseline: boolean;
  entryCount: number;
  pages: number;
  durationMs: number;
  /** The run's progress was counted with the snapshot (SyncTargetOptions.advanceRun): the caller need not refresh the run. */
  runAdvanced?: boolean;
  /** Why the impact on a usage column could not be computed (the list itself synced). */
  impactError?: string;
  /**
   * Not recorded yet: taken by its run's batch (SyncTargetOptions.batch, apply-batch.ts), an
   * unchanged list set aside for the run to record with its other unchanged lists, or a first load
   * held for it to apply with its others; the run gives it its snapshotId.
   */
  setAside?: boolean;
}

/**
 * What a list that synced never carries: declared absent (`?: never`) so that any outcome can be
 * asked for its error and answer undefined, while none but a held or failed one can hold one.
 */
interface NoError {
  error?: never;
  errorCode?: never;
  failure?: never;
}

/** The list as its last ok snapshot has it. */
export interface UnchangedOutcome extends OutcomeFacts, NoError {
  status: 'unchanged';
  /**
   * Set aside by its served digest (src/sync/collect/collect.ts#ServedDigest): its entries came as the last ok snapshot's
   * did, so none of them was normalised or hashed.
   */
  asServedBefore?: boolean;
}

/** The list's rows changed, or were loaded for the first time (`baseline`). */
export interface ChangedOutcome extends OutcomeFacts, NoError {
  status: 'changed';
  asServedBefore?: never;
}

/** Fetched whole but not applied: its removals or its change of columns wait for a person. */
export interface HeldOutcome extends OutcomeFacts {
  status: 'held';
  error: string;
  /** `held` (too many removals) or `held_schema`. */
  errorCode: ErrorCode;
  failure?: never;
  asServedBefore?: never;
}

/** The list could not be synced: the service, its answer or its data failed (`unavailable`: the service could not be reached). */
export interface FailedOutcome extends OutcomeFacts {
  status: 'failed' | 'unavailable';
  error: string;
  errorCode: ErrorCode;
  /** The failure itself, recorded or not yet: the caller decides whether to record it or retry. Never carries a secret. */
  failure: ListFailure;
  asServedBefore?: never;
}

/** Whether an outcome is a failure of the list. */
export function isFailedOutcome(outcome: TargetOutcome): outcome is FailedOutcome {
  return outcome.status === 'failed' || outcome.status === 'unavailable';
}

/** The error an outcome carries: a held list's reason or a failure's message; undefined for a list that synced. */
export function outcomeError(outcome: TargetOutcome): { error: string; errorCode: ErrorCode } | undefined {
  return outcome.status === 'held' || isFailedOutcome(outcome) ? { error: outcome.error, errorCode: outcome.errorCode } : undefined;
}

// ── Failures in the log ──
// How list failures reach the log. A worker's target jobs each log their own, those alike quiet for
// a while after the first (src/util/quiet-repeats.ts); an in-process run (`refsync sync`, `demo`)
// holds them to its end and logs each error once with the lists it stopped, so an untrusted
// certificate, a refused login or an unreachable host is one warning, not one per list.

export type LoggedFailure = Error & { code: string };

export interface FailureLog {
  failed(target: Target, failure: LoggedFailure): void;
  /** Logs what was held back; a log that holds nothing has nothing to do. */
  flush(): void;
}

/**
 * Each failure logged when it comes. With `repeats` (a worker's), a failure alike to one warned
 * of within its quiet spell (the same source, code and cause: every list's job stopped by one
 * unreachable host) is logged at debug, and counted in the next warning.
 */
export function eachFailureLog(logger: Logger, repeats?: QuietRepeats): FailureLog {
  // A job's logger names its target already: said twice, the line had two `target` keys.
  const named = 'target' in logger.bindings();
  return {
    failed(target, failure) {
      const fields = { ...(named ? {} : { target: listVariant(target) }), code: failure.code, err: failure.message };
      if (!repeats) return logger.warn(fields, 'list failed');
      repeats.warn(logger, ['list failed', target.source.name, failure.code, causeOf(failure.message, failure.code)], fields, 'list failed');
    },
    flush: () => undefined,
  };
}

/** Failures held until flush, then one line per cause (per environment, code and cause: failure-cause.ts) naming every list it stopped. */
export function groupedFailureLog(logger: Logger): FailureLog {
  let held: { target: Target; failure: LoggedFailure }[] = [];
  return {
    failed(target, failure) {
      held.push({ target, failure });
    },
    flush() {
      for (const group of groupAlike(held, (f) => [f.target.source.environment, f.failure.code, causeOf(f.failure.message, f.failure.code)])) {
        const { target, failure } = group[0]!;
        const fields = { environment: target.source.environment, code: failure.code, err: sharedMessage(group.map((f) => f.failure.message)) };
        const targets = group.map((f) => listVariant(f.target));
        if (targets.length === 1) logger.warn({ ...fields, target: targets[0] }, 'list failed');
        else logger.warn({ ...fields, targets }, `${targets.length} lists failed with the same error`);
      }
      held = [];
    },
  };
}

// ── A failure recorded ──

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

// ── What applying a list yields ──

/** The types the ways of applying a list share (the staged diff, the first loads, syncTarget). */

/**
 * How an entry changed. `reshaped`: it differs from its previous version only by fields that appeared
 * in or left the list in the same snapshot (a shape change, not an edit); `modified` is a real edit.
 */
export type ChangeKind = 'added' | 'removed' | 'modified' | 'reappeared' | 'reshaped';
export const changeKinds: readonly ChangeKind[] = ['added', 'removed', 'modified', 'reappeared', 'reshaped'];

/** The kinds that have an alert of their own (a reshaped entry is counted in the schema_changed alert). */
export type AlertedChangeKind = Exclude<ChangeKind, 'reshaped'>;
export const alertedChangeKinds: readonly AlertedChangeKind[] = ['added', 'removed', 'modified', 'reappeared'];

export const zeroCounts = (): Record<ChangeKind, number> => ({ added: 0, removed: 0, modified: 0, reappeared: 0, reshaped: 0 });

/** A first load's counts: every entry added. */
export const firstLoadCounts = (entryCount: number): Record<ChangeKind, number> => ({ ...zeroCounts(), added: entryCount });

export interface ApplyOptions {
  runId: number | null;
  /** Apply a fetch even when it would retire more than the allowed share of the list. */
  acceptRemovals: boolean;
  /** Apply a change of the list's columns that its schema policy would hold. */
  acceptSchema: boolean;
  durationMs: () => number;
  /** Staged rows above which the staging and diff tables are ANALYZEd (tuning.analyzeAfterRows). */
  analyzeAfterRows: number;
  /**
   * Count the run's progress in the statement that records an unchanged fetch (a worker's target
   * job, which would otherwise refresh the run in a round trip of its own right after).
   */
  advanceRun: boolean;
}

export interface ApplyResult {
  status: 'unchanged' | 'changed' | 'held';
  snapshotId: number;
  counts: Record<ChangeKind, number>;
  /** The first snapshot of a target is a baseline: its rows are opened, but it records no changes or alerts. */
  baseline: boolean;
  error?: string;
  /** Why a held snapshot was held: `held` (too many removals) unless said (`held_schema`). */
  errorCode?: ErrorCode;
  /** Why the impact on a usage column could not be computed; the snapshot was applied all the same. */
  impactError?: string;
  /** The run's progress was counted with the snapshot (ApplyOptions.advanceRun): no refresh of the run is owed. */
  runAdvanced?: boolean;
}
