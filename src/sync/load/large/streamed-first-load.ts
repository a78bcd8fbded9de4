import { applyColumnPlan, planListColumns, planTarget } from '../../../columns/recorded-columns.ts';
import { copyIn } from '../../../db/copy-in.ts';
import { firstLoadCounts, type ApplyOptions } from '../../outcome/target-outcome.ts';
import { BackgroundWrite } from '../background-write.ts';
import type { CollectedList, NormalizedEntry } from '../../collect/collect.ts';
import type { Loader, LoadResult } from '../loader.ts';
import { notifyChange, snapshotOf, onePerKey } from '../../batch/apply-batch.ts';
import { usesCopy, type RowWriteRule } from '../row-write-rule.ts';
import { copyEntries, insertEntries, insertSnapshot, reserveSnapshotId, copyChunks, entryCopyPrefix, unnestRows } from '../../sql.ts';
import type { TargetTransaction } from '../../target/target-transaction.ts';
import { noteWaitingViews } from '../views-wait.ts';

const UNIQUE_VIOLATION = '23505';

/**
 * The first load of a large list: a target never loaded, whose fetch spilled. Every entry is new, so
 * rows go straight into refdata.entries under a snapshot id reserved up front, with no staging and no
 * diff. It is a baseline: no change rows and no alerts, only the snapshot, the list's typed columns
 * and the NOTIFY. (A list that never spills is written whole after its fetch: src/sync/batch/apply-batch.ts#writeFirstLoads.)
 *
 * In a transaction begun at the first spill and held through the rest of the fetch, batches are
 * written while the next pages are fetched: a first load has nothing to diff against, so staging
 * every row and copying it again afterwards only doubled Postgres's work and put it after the fetch.
 *
 * Two entries under one key are caught by the current-row unique index. Only the resync's diff can
 * tell an identical duplicate (kept once) from a conflicting one (a list failure), so the load then
 * asks for the list to be fetched again through staging; its transaction is rolled back.
 */
export class StreamedFirstLoad implements Loader {
  readonly kind = 'first-load';
  readonly #txn: TargetTransaction;
  readonly #rule: RowWriteRule;
  /** The snapshot's id, reserved by the first batch written (or by finish, when no batch had rows). */
  #reserved: Promise<SnapshotIds> | undefined;
  readonly #batch = new BackgroundWrite();
  #written = 0;
  /** Why the load must be fetched again (a key met twice), once the unique index said so. */
  #conflict: string | undefined;

  private constructor(txn: TargetTransaction, rule: RowWriteRule) {
    this.#txn = txn;
    this.#rule = rule;
  }

  /** A first load in `txn`, whose state says the target was never loaded. */
  static open(txn: TargetTransaction, rule: RowWriteRule): StreamedFirstLoad {
    return new StreamedFirstLoad(txn, rule);
  }

  get rowsWritten(): number {
    return this.#written;
  }

  /** Resolves once the previous batch is in; throws the failure of any earlier one. */
  async append(rows: NormalizedEntry[]): Promise<void> {
    await this.#batch.written();
    if (this.#conflict || rows.length === 0) return;
    this.#written += rows.length;
    const ids = this.#reserve();
    this.#batch.start(ids.then((reserved) => this.#write(rows, reserved)));
  }

  #reserve(): Promise<SnapshotIds> {
    const { q, target, state } = this.#txn;
    this.#reserved ??= q
      .query<{ id: string }>(reserveSnapshotId)
      .then(({ rows: [row] }) => ({ snapshotId: Number(row!.id), rowPrefix: entryCopyPrefix(target, state.now, Number(row!.id)) }));
    return this.#reserved;
  }

  async #write(rows: readonly NormalizedEntry[], ids: SnapshotIds): Promise<void> {
    const { q, target, state } = this.#txn;
    try {
      if (usesCopy(this.#rule, rows.length)) {
        await copyIn(q, copyEntries, copyChunks(rows, `${ids.rowPrefix}\t`));
      } else {
        await insertEntries(q, target, state.now, ids.snapshotId, unnestRows(rows, 6));
      }
    } catch (err) {
      // The transaction is aborted now: later batches are skipped and finish() rolls it back.
      if ((err as { code?: unknown }).code !== UNIQUE_VIOLATION) throw err;
      this.#conflict = `${target.list.key}: an entry key came twice in the fetch`;
    }
  }

  /** Writes the last rows and the snapshot, and commits: the load becomes visible all at once. */
  async finish(collected: CollectedList, options: ApplyOptions): Promise<LoadResult> {
    // Identical duplicates are counted once in entryCount; only then is a pass over the rows worth it.
    const pending = this.#written + collected.pending.length > collected.entryCount ? onePerKey(collected.pending) : collected.pending;
    const { q, target, state } = this.#txn;
    const counts = firstLoadCounts(collected.entryCount);
    await this.append(pending);
    await this.#batch.written();
    if (this.#conflict) {
      await this.#txn.rollback();
      return { fetchAgain: this.#conflict };
    }
    // Planned before the snapshot row, which carries the count of values that do not fit.
    const columns = await planListColumns(q, target.list.key, collected.fieldValues, planTarget(target));
    const row = snapshotOf(collected, options, state.now, { status: 'ok', changed: true, counts, nonconforming: columns.nonconforming });
    const snapshotId = await insertSnapshot(q, target, { ...row, id: (await this.#reserve()).snapshotId });
    // A baseline records no changes and no alerts, but the list's views must show its columns.
    await noteWaitingViews(q, snapshotId, await applyColumnPlan(q, columns, snapshotId, state.now));
    notifyChange(this.#txn, target, snapshotId, counts);
    await this.#txn.commit();
    return { applied: { status: 'changed', snapshotId, counts, baseline: true } };
  }

  /** Rolls back an unfinished load: nothing of it stays. */
  async abort(): Promise<void> {
    await this.#batch.idle();
    await this.#txn.rollback();
  }
}

/** The id a first load's rows carry, and the COPY text of the columns in front of each row. */
interface SnapshotIds {
  snapshotId: number;
  rowPrefix: string;
}
