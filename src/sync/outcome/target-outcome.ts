import type { Target } from '../../catalog/targets.ts';
import type { ChangeKind } from '../load/apply-types.ts';
import type { ErrorCode, ListFailure } from '../../util/error-codes.ts';

/** What one sync of a target came to, told apart by its status: what syncTarget returns and its caller settles. */
export type TargetOutcome = UnchangedOutcome | ChangedOutcome | HeldOutcome | FailedOutcome;

export type TargetStatus = TargetOutcome['status'];

/** What every outcome says, whatever its status. */
interface OutcomeFacts {
  target: Target;
  /** The snapshot written; for a failure, once the caller has recorded it (record-failure.ts). */
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
   * Set aside by its served digest (served-digest.ts): its entries came as the last ok snapshot's
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
