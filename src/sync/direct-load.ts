import type { Target } from '../catalog/targets.ts';
import type { Connection } from '../db/database.ts';
import { copyIn } from '../db/copy-in.ts';
import type { ApplyOptions, ApplyResult } from './apply-types.ts';
import { BackgroundWrite } from './background-write.ts';
import { isFirstLoad, recordFirstLoad } from './first-load.ts';
import type { CollectedList } from './collect.ts';
import type { NormalizedEntry } from './normalize.ts';
import { previousSnapshots } from './previous.ts';
import { copyChunks, copyText, unnestRows } from './staging.ts';
import { copyEntries, hasCurrentRows, insertEntries, nextSnapshotId } from './sql.ts';
import { tryLockTarget } from './target-lock.ts';

/**
 * Two entries of the fetch came under one key, which the current-row unique index caught during a
 * direct load. Only the staged path can tell identical duplicates (kept once) from conflicting ones
 * (a list failure), so the caller fetches again through staging.
 */
export class DirectLoadConflict extends Error {
  readonly code = 'direct_load_conflict';
}

const UNIQUE_VIOLATION = '23505';

/**
 * The first load of a large target, written straight into refdata.entries while the list is still
 * being fetched. A first load has nothing to diff against, so staging every row and copying it
 * again afterwards only doubled Postgres's work and put all of it after the fetch. The transaction
 * opens at the first spill under the target's lock and commits with the snapshot at the end; a
 * failed fetch rolls it back and leaves nothing behind.
 *
 * The lock is held for the whole fetch, so a concurrent sync of the same target waits for it
 * (within lock_timeout). It is only tried, never waited for: a target another sync is applying
 * takes the staged path.
 */
export class DirectLoad {
  readonly #conn: Connection;
  readonly #target: Target;
  readonly #now: Date;
  readonly #snapshotId: number;
  readonly #rowPrefix: string;
  readonly #copyMinRows: number;
  readonly #batch = new BackgroundWrite();
  #open = true;

  private constructor(conn: Connection, target: Target, now: Date, snapshotId: number, copyMinRows: number) {
    this.#conn = conn;
    this.#copyMinRows = copyMinRows;
    this.#target = target;
    this.#now = now;
    this.#snapshotId = snapshotId;
    const s = target.source;
    this.#rowPrefix = [s.environment, target.list.key, target.variant, now.toISOString(), snapshotId, snapshotId]
      .map((v) => copyText(String(v)))
      .join('\t');
  }

  /**
   * Opens the load if the target has never been loaded: no ok snapshot and no current rows, checked
   * under its lock. Otherwise (or when another sync holds the lock) returns undefined and leaves the
   * connection as it was.
   */
  static async begin(conn: Connection, target: Target, copyMinRows: number): Promise<DirectLoad | undefined> {
    const { environment } = target.source;
    await conn.begin();
    try {
      if (!(await tryLockTarget(conn, environment, target.list.key, target.variant))) {
        await conn.query('rollback');
        return undefined;
      }
      const { lastOk } = await previousSnapshots(conn, environment, target.list.key, target.variant);
      if (!(await isFirstLoad(Boolean(lastOk), () => hasCurrentRows(conn, target)))) {
        await conn.query('rollback');
        return undefined;
      }
      const { rows } = await conn.query<{ now: Date; id: string }>(`select clock_timestamp() as now, ${nextSnapshotId} as id`);
      return new DirectLoad(conn, target, rows[0]!.now, Number(rows[0]!.id), copyMinRows);
    } catch (err) {
      await conn.query('rollback').catch(() => undefined);
      throw err;
    }
  }

  /**
   * Writes rows in the background while the caller fetches on: resolves once the previous batch is
   * in, and throws the failure of any earlier one.
   */
  async append(rows: readonly NormalizedEntry[]): Promise<void> {
    await this.#batch.settle();
    this.#batch.start(this.#write(rows));
  }

  async #write(rows: readonly NormalizedEntry[]): Promise<void> {
    if (rows.length === 0) return;
    try {
      if (rows.length >= this.#copyMinRows) {
        await copyIn(this.#conn, copyEntries, copyChunks(rows, `${this.#rowPrefix}\t`));
        return;
      }
      await insertEntries(this.#conn, this.#target, this.#now, this.#snapshotId, unnestRows(rows, 6));
    } catch (err) {
      if ((err as { code?: unknown }).code === UNIQUE_VIOLATION) {
        throw new DirectLoadConflict(`${this.#target.list.key}: an entry key came twice in the fetch`);
      }
      throw err;
    }
  }

  /** Writes the last rows and the snapshot, and commits: the load becomes visible all at once. */
  async finish(collected: CollectedList, options: ApplyOptions): Promise<ApplyResult> {
    await this.append(collected.pending);
    await this.#batch.settle();
    const result = await recordFirstLoad(this.#conn, this.#target, collected, options, this.#now, this.#snapshotId);
    await this.#conn.query('commit');
    this.#open = false;
    return result;
  }

  /** Rolls back an unfinished load (a failed fetch, or a conflict): nothing of it stays. */
  async abort(): Promise<void> {
    if (!this.#open) return;
    this.#open = false;
    await this.#batch.idle();
    await this.#conn.query('rollback');
  }
}
