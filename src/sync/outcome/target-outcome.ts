import type { Target } from '../../catalog/targets.ts';
import type { ChangeKind } from '../load/apply-types.ts';
import type { LoaderKind } from '../load/loader.ts';
import type { ErrorCode, ListFailure } from '../../util/error-codes.ts';

export type TargetStatus = 'unchanged' | 'changed' | 'held' | 'failed' | 'unavailable';

/** What one sync of a target came to: what syncTarget returns and its caller settles. */
export interface TargetOutcome {
  target: Target;
  status: TargetStatus;
  /** The snapshot written; for a failure, once the caller has recorded it (record-failure.ts). */
  snapshotId?: number;
  counts: Record<ChangeKind, number>;
  baseline: boolean;
  entryCount: number;
  pages: number;
  durationMs: number;
  error?: string;
  errorCode?: ErrorCode;
  /** Why the impact on a usage column could not be computed (the list itself synced). */
  impactError?: string;
  /** The run's progress was counted with the snapshot (SyncTargetOptions.advanceRun): the caller need not refresh the run. */
  runAdvanced?: boolean;
  /**
   * Unchanged, and not recorded yet: set aside for its run to record with its other unchanged lists
   * (SyncTargetOptions.unchanged), which gives it its snapshotId.
   */
  setAside?: boolean;
  /**
   * Set aside as unchanged by its served digest (served-digest.ts): its entries came as the last ok
   * snapshot's did, so none of them was normalised or hashed.
   */
  asServedBefore?: boolean;
  /** How the list reached the database: which loader wrote it, the rows it wrote, and in how many fetches. */
  load?: { loader: LoaderKind; rowsWritten: number; fetches: number };
  /**
   * A failure of the list (status failed or unavailable), not yet recorded: the caller decides
   * whether to record it or retry. Never carries a secret.
   */
  failure?: ListFailure;
}
