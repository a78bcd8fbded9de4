import type { ApplyOptions } from '../outcome/target-outcome.ts';
import type { CollectedList, NormalizedEntry } from '../collect/collect.ts';
import type { LazyConnection } from '../../db/database.ts';
import type { Target } from '../../catalog/catalog.ts';
import type { Loader, LoadResult } from './loader.ts';
import { applyResync, stagedDiff } from './resync-apply.ts';
import type { RowsCheck } from '../sync-target.ts';
import type { RowWriteRule } from './row-write-rule.ts';
import { StagingTable } from './staging.ts';
import { TargetTransaction } from '../target/target-transaction.ts';
import { recordIfUnchanged } from '../batch/apply-batch.ts';

/**
 * The load of a target that has rows: fetched rows go to a staging table (on Postgres, only the ones
 * the current-row index does not match), and finish() diffs staging against the current rows in one
 * transaction under the target's lock (resync-apply.ts). An unchanged list stages nothing at all.
 */
export class Resync implements Loader {
  readonly kind = 'resync';
  readonly #conn: LazyConnection;
  readonly #target: Target;
  readonly #check: RowsCheck;
  readonly #staging: StagingTable;
  /** The transaction to finish in when the load was chosen inside one; else finish() opens its own. */
  readonly #txn: TargetTransaction | undefined;
  #finished = false;

  constructor(conn: LazyConnection, target: Target, check: RowsCheck, rule: RowWriteRule, txn?: TargetTransaction) {
    this.#conn = conn;
    this.#target = target;
    this.#check = check;
    this.#staging = new StagingTable(conn, rule);
    this.#txn = txn;
  }

  get rowsWritten(): number {
    return this.#staging.rowsAppended;
  }

  async append(rows: NormalizedEntry[]): Promise<void> {
    await this.#staging.append(await this.#check.unmatched(rows));
  }

  async finish(collected: CollectedList, options: ApplyOptions): Promise<LoadResult> {
    const result = (await this.#recordedAlone(collected, options)) ?? (await this.#applied(collected, options));
    // A diff's last use of staging dropped it; an unchanged list (or a stale index) never got there.
    const diffed = 'applied' in result && result.applied.status !== 'unchanged';
    if (!diffed) await this.#staging.drop();
    this.#finished = true;
    return result;
  }

  /** With nothing staged and no transaction begun, an unchanged list is recorded in one statement. */
  async #recordedAlone(collected: CollectedList, options: ApplyOptions): Promise<LoadResult | undefined> {
    if (this.#txn || this.#staging.rowsAppended > 0) return undefined;
    return recordIfUnchanged(this.#conn, this.#target, collected, options);
  }

  /** The diff applied in the transaction the load was chosen in, or in one of its own. */
  async #applied(collected: CollectedList, options: ApplyOptions): Promise<LoadResult> {
    const source = stagedDiff(this.#target, this.#staging);
    if (this.#txn) return applyResync(this.#txn, source, collected, options);
    return this.#conn.transaction(
      async (tx, opened, atCommit) => applyResync(await TargetTransaction.within(tx, this.#target, opened, atCommit), source, collected, options),
      TargetTransaction.opening(this.#target),
    );
  }

  /** Drops the staging table of a load that did not finish (one made in a transaction went with it). */
  async abort(): Promise<void> {
    if (!this.#finished) await this.#staging.drop();
  }
}
