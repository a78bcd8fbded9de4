import { randomBytes } from 'node:crypto';
import { copyIn } from '../../db/copy-in.ts';
import type { Queryable, LazyConnection } from '../../db/database.ts';
import { BackgroundWrite } from './background-write.ts';
import { usesCopy, type RowWriteRule } from './row-write-rule.ts';
import type { NormalizedEntry } from '../collect/collect.ts';
import { copyChunks, unnestRows } from '../sql.ts';
import { createStagingTable, insertStaged, copyIntoStaging, dropSessionTable } from './load-sql.ts';

/**
 * A temporary table holding one fetched list, so that the diff against the current rows is one
 * set-based statement instead of a round trip per entry. It lives in the transaction that applies
 * the list (ON COMMIT DROP), begun early when rows spill while the list is still fetched, so it
 * works through a transaction-mode pooler and nothing of it outlasts the apply or a failure.
 */
export class StagingTable {
  readonly #conn: LazyConnection;
  #name: string | undefined;
  #created = false;
  /** Made outside any transaction (PGlite only): it lasts until drop(). */
  #sessionScoped = false;
  #appended = 0;
  /** A spill still being written (at most one), and how it failed. */
  readonly #spill = new BackgroundWrite();
  readonly #rule: RowWriteRule;

  /** Named when first used: nearly every list that gets a staging table is unchanged and never uses it. */
  get name(): string {
    this.#name ??= `refsync_stage_${randomBytes(6).toString('hex')}`;
    return this.#name;
  }

  /** Rows written so far (duplicates included). */
  get rowsAppended(): number {
    return this.#appended;
  }

  constructor(conn: LazyConnection, rule: RowWriteRule) {
    this.#conn = conn;
    this.#rule = rule;
  }

  async #create(q: Queryable): Promise<void> {
    if (this.#created) return;
    const inTransaction = q !== this.#conn || (await this.#conn.openEarly());
    await q.query(createStagingTable(this.name, inTransaction));
    this.#created = true;
    this.#sessionScoped = !inTransaction;
  }

  /**
   * Appends rows: a large batch streams in with COPY FROM STDIN where the database takes it,
   * anything else goes in one statement (arrays unnested server-side, which PGlite understands too). Inside a
   * transaction pass it as `q`: on PGlite, the connection itself waits for the transaction to end.
   */
  async append(rows: readonly NormalizedEntry[], q: Queryable = this.#conn): Promise<void> {
    await this.#spill.written();
    // Nothing to write creates nothing (complete makes the table for the diff): a list whose every row
    // the index matched begins no transaction, and is recorded in one statement if unchanged.
    if (rows.length === 0) return;
    await this.#create(q);
    this.#appended += rows.length;
    if (usesCopy(this.#rule, rows.length)) {
      const write = this.#copy(rows, q);
      if (q !== this.#conn) return write;
      // A spill outside the transaction is written while the caller fetches the next pages: it
      // resolves once the previous spill is done, and any later append, ensure or drop waits for
      // this one and throws its error, so the diff never runs on a partial table.
      this.#spill.start(write);
      return;
    }
    const source = unnestRows(rows, 1);
    await q.query(insertStaged(this.name, source.from), source.params);
  }

  /**
   * COPY through the driver's query(): node-postgres runs a submittable (the copy stream) on the
   * held connection and hands it back, so the rows are written to it with backpressure.
   */
  async #copy(rows: readonly NormalizedEntry[], q: Queryable): Promise<void> {
    await copyIn(q, copyIntoStaging(this.name), copyChunks(rows));
  }

  /**
   * The table's last use, in the transaction `q` that applies the list: appends the rows still in
   * memory, then hands `use` the complete table (created even for an empty list, which still needs
   * one to diff against), and drops it after, in `q` (on PGlite the connection itself would wait
   * for that transaction to end).
   */
  async complete<T>(rest: readonly NormalizedEntry[], q: Queryable, use: (table: { name: string; rows: number }) => Promise<T>): Promise<T> {
    await this.append(rest, q);
    await this.#create(q);
    try {
      return await use({ name: this.name, rows: this.#appended });
    } finally {
      await this.#dropIn(q);
    }
  }

  /** Frees the table of a load that did not finish: waits for a spill in flight, then drops it. */
  async drop(): Promise<void> {
    await this.#spill.idle();
    await this.#dropIn(this.#conn);
  }

  /**
   * A table made in a transaction goes with it; one made outside (PGlite) is dropped. Not marked
   * gone: if the transaction that dropped it rolls back, the table is back, and drop() must try again.
   */
  async #dropIn(q: Queryable): Promise<void> {
    if (this.#created && this.#sessionScoped) await q.query(dropSessionTable(this.name));
  }
}
