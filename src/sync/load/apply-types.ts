/** The types the ways of applying a list share (the staged diff, the first loads, syncTarget). */
import type { ErrorCode } from '../../util/error-codes.ts';

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
