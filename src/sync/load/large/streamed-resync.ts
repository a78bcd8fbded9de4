import { randomBytes } from 'node:crypto';
import { bigintArrayText, type Queryable } from '../../../db/database.ts';
import type { ApplyOptions } from '../../outcome/target-outcome.ts';
import { BackgroundWrite } from '../background-write.ts';
import type { CollectedList, NormalizedEntry } from '../../collect/collect.ts';
import type { CurrentRowsCheck } from './current-rows-check.ts';
import type { Loader, LoadResult } from '../loader.ts';
import { applyResync, type DiffSource } from '../resync-apply.ts';
import { unnestRows, insertEntries, openedBy, reserveSnapshotId, rowsGeneration, targetParams } from '../../sql.ts';
import type { TargetTransaction } from '../../target/target-transaction.ts';
import { createStreamedDiff, indexDiffByBatch, diffAndCloseSpill, closeRemovedIntoDiff, analyzeTable } from '../load-sql.ts';

/**
 * The resync of a large list written while it is fetched. It is taken at the first spill when the
 * target's lock is free there (only tried, as a streaming first load does) and the index of the
 * current rows still shows them (nothing was applied since it was read). Each spill's entries that
 * the index did not match are diffed against the current rows in the open transaction, and their
 * old versions are closed and new ones opened there and then: Postgres writes them on its core while
 * the fetch parses and hashes on the other, where a resync that stages them wrote them all after
 * the fetch. finish() closes the removed ones, and the rest of the apply (counts, the column plan,
 * holds, the snapshot, change rows, alerts, impact) runs on that diff as for a staged resync
 * (resync-apply.ts). A hold rolls every version written back first (a savepoint taken before them).
 */
export class StreamedResync implements Loader {
  readonly kind = 'streamed-resync';
  /**
   * Rows per spill: the entries kept are only the ones the index did not match, so the collector's
   * spills of thousands would come twice in a 1%-changed million and leave the last one, the largest
   * share of the writes, for after the fetch. In small spills the writes keep up with the fetch.
   */
  readonly spillEach = 1_000;
  readonly #txn: TargetTransaction;
  readonly #check: CurrentRowsCheck;
  /** The id the new versions carry: the snapshot finish() writes (reserved at open, like a streaming first load's). */
  readonly #snapshotId: number;
  /** A temp table with the columns of a staged resync's diff (sql.ts#createDiff), and the spill that wrote each row. */
  readonly #diff = `refsync_streamed_${randomBytes(6).toString('hex')}_diff`;
  readonly #write = new BackgroundWrite();
  #batches = 0;
  #written = 0;

  private constructor(txn: TargetTransaction, check: CurrentRowsCheck, snapshotId: number) {
    this.#txn = txn;
    this.#check = check;
    this.#snapshotId = snapshotId;
  }

  /**
   * The streamed resync in `txn` (the target's lock held, a target with rows), when the index of
   * its current rows is in and still current; undefined when not (the caller rolls back and stages).
   */
  static async open(txn: TargetTransaction, check: CurrentRowsCheck): Promise<StreamedResync | undefined> {
    const index = check.index;
    if (!index || (await rowsGeneration(txn.q, txn.target)) !== index.generation) return undefined;
    const { rows } = await txn.q.query<{ id: string }>(reserveSnapshotId);
    const loader = new StreamedResync(txn, check, Number(rows[0]!.id));
    await txn.q.query(createStreamedDiff(loader.#diff));
    // Each spill opens the versions of its own rows: found by their spill, not by reading the whole diff.
    await txn.q.query(indexDiffByBatch(loader.#diff));
    await txn.q.query('savepoint streamed_versions');
    return loader;
  }

  get rowsWritten(): number {
    return this.#written;
  }

  /** Writes the spill's unmatched entries while the fetch goes on: resolves once the previous spill is in. */
  async append(rows: NormalizedEntry[]): Promise<void> {
    await this.#write.written();
    const unmatched = await this.#check.unmatched(rows);
    if (unmatched.length === 0) return;
    this.#written += unmatched.length;
    this.#write.start(this.#writeVersions(unmatched));
  }

  /** The closing time and the snapshot the closed versions end with: the last ok one, else this one. */
  #closing(): [Date, number] {
    const { state } = this.#txn;
    return [state.now, state.lastOk?.id ?? this.#snapshotId];
  }

  /**
   * One spill: its entries not current as fetched go into the diff, with the current version of
   * their key when there is one (modified) or none (added); those current versions are closed in the
   * same statement, then the new ones opened (apart: opened in the same statement, a new version
   * could meet its old one still current in the unique index of current rows). The current version
   * is looked up key by key (LATERAL ... LIMIT 1) in that index: right after a large load the
   * statistics are stale, and a join let the planner read the whole table for every spill.
   */
  async #writeVersions(rows: readonly NormalizedEntry[]): Promise<void> {
    const { q, target } = this.#txn;
    const batch = ++this.#batches;
    const source = unnestRows(rows, 7);
    await q.query(diffAndCloseSpill(this.#diff, source.from), [...targetParams(target), ...this.#closing(), batch, ...source.params]);
    await insertEntries(q, target, this.#txn.state.now, this.#snapshotId, openedBy(this.#diff, batch));
  }

  /**
   * The current versions no fetched entry matched, less the ones a spill closed (modified, which
   * the index reports unmatched too): closed now, into the diff as removed. The closed ones are left
   * out before the lookup, not by it: looked up, each costs a read of its old and new version.
   */
  async #closeRemoved(q: Queryable, unseenIds: number[]): Promise<void> {
    if (unseenIds.length === 0) return;
    await q.query(closeRemovedIntoDiff(this.#diff), [...this.#closing(), bigintArrayText(unseenIds)]);
  }

  /** Writes the last entries and the removed, applies the diff as a staged resync's, and commits. */
  async finish(collected: CollectedList, options: ApplyOptions): Promise<LoadResult> {
    // The pending entries were checked against the index already (CurrentRowsCheck#finish).
    await this.#write.written();
    if (collected.pending.length) {
      this.#written += collected.pending.length;
      await this.#writeVersions(collected.pending);
    }
    const source: DiffSource = {
      complete: async (tx) => {
        await this.#closeRemoved(tx, collected.index?.unseenIds ?? []);
        if (this.#written > options.analyzeAfterRows) await tx.query(analyzeTable(this.#diff));
        return this.#diff;
      },
      streamed: { snapshotId: this.#snapshotId, undo: async () => void (await this.#txn.q.query('rollback to savepoint streamed_versions')) },
    };
    const result = await applyResync(this.#txn, source, collected, options);
    await this.#txn.commit();
    return result;
  }

  /** Rolls back an unfinished load: nothing of it stays. */
  async abort(): Promise<void> {
    await this.#write.idle();
    await this.#txn.rollback();
  }
}
