import type { ApplyOptions, ApplyResult } from '../outcome/target-outcome.ts';
import type { CollectedList, NormalizedEntry } from '../collect/collect.ts';

/** The ways a fetched list takes into the database (first-load-alone.ts and src/sync/batch/apply-batch.ts, resync.ts, large/). */
export type LoaderKind = 'first-load' | 'resync' | 'streamed-resync';

/**
 * What a load ended in: applied, or a fast path that backed out and asks for the list to be fetched
 * again the plain way (a stale index of the current rows, a key met twice by a streaming first load).
 * A value, not an exception: the caller's retry is written out where it happens (sync-target.ts).
 * `setAside`: a small fetch its run's batch took (apply-batch.ts), left unrecorded: an unchanged list
 * for the run to record with its other unchanged lists, or with `firstLoad` a first load gathered for
 * it to apply with its others; only loadAfterFetch answers it, never a loader.
 */
export type LoadResult = { applied: ApplyResult } | { fetchAgain: string } | { setAside: true; firstLoad?: true };

/**
 * One way of writing a fetched list: rows handed over while the fetch goes on, then the rest and the
 * snapshot in one commit. Nothing a load wrote is visible before finish() commits, and abort()
 * leaves nothing behind.
 */
export interface Loader {
  readonly kind: LoaderKind;
  /** Rows written so far: into the entries (first load), into staging (resync), or into the diff (streamed resync). */
  readonly rowsWritten: number;
  /** Rows per spill this load wants from its next spill on, when not the collector's own (tuning.spillEvery). */
  readonly spillEach?: number;
  /** Takes a batch of rows while the fetch goes on (written in the background where it can be). */
  append(rows: NormalizedEntry[]): Promise<void>;
  /** The fetch is complete: writes what is left and the snapshot, and commits. */
  finish(collected: CollectedList, options: ApplyOptions): Promise<LoadResult>;
  /** Undoes an unfinished load (a failed fetch); harmless after finish. */
  abort(): Promise<void>;
}
