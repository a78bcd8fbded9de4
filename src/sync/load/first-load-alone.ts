import type { CollectedList, NormalizedEntry } from '../collect/collect.ts';
import { reserveSnapshotId } from '../sql.ts';
import type { TargetTransaction } from '../target/target-transaction.ts';
import { firstLoadCounts, type ApplyOptions } from '../outcome/target-outcome.ts';
import { writeFirstLoads } from '../batch/apply-batch.ts';
import type { Loader, LoadResult } from './loader.ts';
import type { RowWriteRule } from './row-write-rule.ts';

/**
 * The first load of a list that never spilled, when no run holds it to apply with its others
 * (src/sync/batch/apply-batch.ts#FirstLoadsTogether): a group of one, written by the same statements (src/sync/batch/apply-batch.ts#writeFirstLoads)
 * in the transaction loadAfterFetch opened under the target's lock, whose state says first load.
 * Its rows come whole at finish(); a list that spills streams instead (large/streamed-first-load.ts).
 */
export class FirstLoadAlone implements Loader {
  readonly kind = 'first-load';
  readonly #txn: TargetTransaction;
  readonly #rule: RowWriteRule;
  #written = 0;

  constructor(txn: TargetTransaction, rule: RowWriteRule) {
    this.#txn = txn;
    this.#rule = rule;
  }

  get rowsWritten(): number {
    return this.#written;
  }

  /** Never called: it is chosen after the fetch, with every row in hand. */
  async append(_rows: NormalizedEntry[]): Promise<void> {
    throw new Error(`${this.#txn.target.list.key}: a first load chosen after its fetch takes its rows at finish`);
  }

  /** Writes the columns, the snapshot, the rows and the NOTIFY; the transaction's owner commits. */
  async finish(collected: CollectedList, options: ApplyOptions): Promise<LoadResult> {
    const { q, target, state } = this.#txn;
    const { rows } = await q.query<{ id: string }>(reserveSnapshotId);
    const snapshotId = Number(rows[0]!.id);
    await writeFirstLoads(
      { q, now: state.now, atCommit: (statement) => this.#txn.atCommit(statement) },
      [{ target, collected, options, snapshotId }],
      this.#rule,
    );
    this.#written = collected.entryCount;
    return { applied: { status: 'changed', snapshotId, counts: firstLoadCounts(collected.entryCount), baseline: true } };
  }

  /** Nothing to undo: its writes are in a transaction its owner rolls back by throwing. */
  async abort(): Promise<void> {}
}
