import { evolveListColumns } from '../columns/recorded-columns.ts';
import { copyIn } from '../db/copy-in.ts';
import { zeroCounts, type ApplyOptions } from './apply-types.ts';
import { BackgroundWrite } from './background-write.ts';
import type { CollectedList } from './collect.ts';
import type { Loader, LoadResult } from './loader.ts';
import type { NormalizedEntry } from './normalize.ts';
import { notifyChange } from './notify.ts';
import { usesCopy, type RowWriteRule } from './row-write-rule.ts';
import { snapshotOf } from './snapshot-row.ts';
import { copyEntries, insertEntries, insertSnapshot, nextSnapshotId } from './sql.ts';
import { copyChunks, copyText, unnestRows } from './staging.ts';
import type { TargetTransaction } from './target-transaction.ts';

const UNIQUE_VIOLATION = '23505';

/**
 * The load of a target never loaded: every entry is new, so rows go straight into refdata.entries
 * under a snapshot id reserved up front, with no staging and no diff. It is a baseline: no change
 * rows and no alerts, only the snapshot, the list's typed columns and the NOTIFY.
 *
 * Streaming (a transaction begun at the first spill, held through the rest of the fetch), batches are
 * written while the next pages are fetched: a first load has nothing to diff against, so staging
 * every row and copying it again afterwards only doubled Postgres's work and put it after the fetch.
 *
 * Two entries under one key are caught by the current-row unique index. Only the resync's diff can
 * tell an identical duplicate (kept once) from a conflicting one (a list failure), so the load then
 * asks for the list to be fetched again through staging; its transaction is rolled back.
 */
export class FirstLoad implements Loader {
  readonly kind = 'first-load';
  readonly #txn: TargetTransaction;
  readonly #rule: RowWriteRule;
  readonly #snapshotId: number;
  /** Target, time and snapshot columns in COPY text, in front of each row's own. */
  readonly #rowPrefix: string;
  readonly #batch = new BackgroundWrite();
  #written = 0;
  /** Why the load must be fetched again (a key met twice), once the unique index said so. */
  #conflict: string | undefined;

  private constructor(txn: TargetTransaction, rule: RowWriteRule, snapshotId: number) {
    this.#txn = txn;
    this.#rule = rule;
    this.#snapshotId = snapshotId;
    const { target } = txn;
    const s = target.source;
    this.#rowPrefix = [s.environment, target.list.key, target.variant, txn.state.now.toISOString(), snapshotId, snapshotId]
      .map((v) => copyText(String(v)))
      .join('\t');
  }

  /** A first load in `txn`, whose state says the target was never loaded. */
  static async open(txn: TargetTransaction, rule: RowWriteRule): Promise<FirstLoad> {
    const { rows } = await txn.q.query<{ id: string }>(`select ${nextSnapshotId} as id`);
    return new FirstLoad(txn, rule, Number(rows[0]!.id));
  }

  get rowsWritten(): number {
    return this.#written;
  }

  /** Resolves once the previous batch is in; throws the failure of any earlier one. */
  async append(rows: NormalizedEntry[]): Promise<void> {
    await this.#batch.settle();
    if (this.#conflict || rows.length === 0) return;
    this.#written += rows.length;
    this.#batch.start(this.#write(rows));
  }

  async #write(rows: readonly NormalizedEntry[]): Promise<void> {
    const { q, target, state } = this.#txn;
    try {
      if (usesCopy(this.#rule, rows.length)) {
        await copyIn(q, copyEntries, copyChunks(rows, `${this.#rowPrefix}\t`));
      } else {
        await insertEntries(q, target, state.now, this.#snapshotId, unnestRows(rows, 6));
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
    await this.append(pending);
    await this.#batch.settle();
    if (this.#conflict) {
      await this.#txn.rollback();
      return { fetchAgain: this.#conflict };
    }
    const { q, target, state } = this.#txn;
    const counts = { ...zeroCounts(), added: collected.entryCount };
    const row = snapshotOf(collected, options, state.now, { id: this.#snapshotId, status: 'ok', changed: true, counts });
    const snapshotId = await insertSnapshot(q, target, row);
    // A baseline records no changes and no alerts, but the list's views must show its columns.
    await evolveListColumns(q, target.list.key, collected.columnTypes, snapshotId, state.now);
    await notifyChange(q, target, snapshotId, counts);
    await this.#txn.commit();
    return { applied: { status: 'changed', snapshotId, counts, baseline: true } };
  }

  /** Rolls back an unfinished load: nothing of it stays. */
  async abort(): Promise<void> {
    await this.#batch.idle();
    await this.#txn.rollback();
  }
}

/** The rows with the first of each key kept: the collector has already failed a key with two contents. */
function onePerKey(rows: NormalizedEntry[]): NormalizedEntry[] {
  const seen = new Set<string>();
  return rows.filter((r) => !seen.has(r.entryKey) && seen.add(r.entryKey));
}
