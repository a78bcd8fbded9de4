import type { ApplyOptions } from './apply-types.ts';
import type { CollectedList } from '../collect/collect.ts';
import type { CurrentRowsCheck } from './current-rows-check.ts';
import type { LazyConnection } from '../../db/lazy-connection.ts';
import type { Target } from '../../catalog/targets.ts';
import type { Loader, LoadResult } from './loader.ts';
import type { NormalizedEntry } from '../collect/normalize.ts';
import { applyResync } from './resync-apply.ts';
import { fetchedFields } from './snapshot-row.ts';
import type { RowWriteRule } from './row-write-rule.ts';
import { StagingTable } from './staging.ts';
import { TargetTransaction } from '../target/target-transaction.ts';
import { recordIfUnchanged } from './unchanged-alone.ts';

/**
 * The load of a target that has rows: fetched rows go to a staging table (on Postgres, only the ones
 * the current-row index does not match), and finish() diffs staging against the current rows in one
 * transaction under the target's lock (resync-apply.ts). An unchanged list stages nothing at all.
 */
export class Resync implements Loader {
  readonly kind = 'resync';
  readonly #conn: LazyConnection;
  readonly #target: Target;
  readonly #check: CurrentRowsCheck;
  readonly #staging: StagingTable;
  /** The transaction to finish in when the load was chosen inside one; else finish() opens its own. */
  readonly #txn: TargetTransaction | undefined;
  #finished = false;

  constructor(conn: LazyConnection, target: Target, check: CurrentRowsCheck, rule: RowWriteRule, txn?: TargetTransaction) {
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
    // Nothing staged and no transaction begun: an unchanged list is recorded in one statement.
    const alone = !this.#txn && this.#staging.rowsAppended === 0 ? await recordIfUnchanged(this.#conn, this.#target, collected, options) : undefined;
    const result = alone
      ? alone
      : this.#txn
        ? await applyResync(this.#txn, this.#staging, collected, options)
        : await this.#conn.transaction(
            async (tx, opened) => applyResync(await TargetTransaction.within(tx, this.#target, opened), this.#staging, collected, options),
            TargetTransaction.opening(this.#target, fetchedFields(collected, options)),
          );
    // A diff's last use of staging dropped it; an unchanged list (or a stale index) never got there.
    const diffed = 'applied' in result && result.applied.status !== 'unchanged';
    if (!diffed) await this.#staging.drop();
    this.#finished = true;
    return result;
  }

  /** Drops the staging table of a load that did not finish (one made in a transaction went with it). */
  async abort(): Promise<void> {
    if (!this.#finished) await this.#staging.drop();
  }
}
