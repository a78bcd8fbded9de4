import { randomBytes } from 'node:crypto';
import { copyIn } from '../db/copy-in.ts';
import type { Queryable } from '../db/database.ts';
import type { LazyConnection } from '../db/lazy-connection.ts';
import { BackgroundWrite } from './background-write.ts';
import { usesCopy, type RowWriteRule } from './row-write-rule.ts';
import { ENTRY_ROW_COLUMNS } from './sql.ts';
import type { NormalizedEntry } from './normalize.ts';

const COPY_CHUNK_CHARS = 256 * 1024;
const copySpecial = /[\\\n\r\t]/;

/** A value in COPY's text format: backslash, newline, carriage return and tab escaped; null is \N. */
export function copyText(value: string | null): string {
  if (value === null) return '\\N';
  if (!copySpecial.test(value)) return value;
  return value.replace(/[\\\n\r\t]/g, (c) => (c === '\\' ? '\\\\' : c === '\n' ? '\\n' : c === '\r' ? '\\r' : '\\t'));
}

/** Rows in COPY's text format, in chunks; `prefix` (already in COPY text) starts every line. */
export function* copyChunks(rows: readonly NormalizedEntry[], prefix = ''): Generator<string> {
  let chunk = '';
  for (const r of rows) {
    chunk += `${prefix}${copyText(r.entryKey)}\t${copyText(r.code)}\t${copyText(r.description)}\t${copyText(r.payload)}\t${copyText(r.digest)}\n`;
    if (chunk.length >= COPY_CHUNK_CHARS) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}

/** Rows to read in SQL: a relation with the columns ENTRY_ROW_COLUMNS. */
export interface RowSource {
  from: string;
  params: unknown[];
  /** Rows in it, identical duplicates included. */
  rows: number;
}

/** Rows held in memory as one unnest over five array parameters, numbered from `first`. */
export function unnestRows(rows: readonly NormalizedEntry[], first: number): RowSource {
  const $ = (i: number) => `$${first + i}`;
  return {
    from: `unnest(${$(0)}::text[], ${$(1)}::text[], ${$(2)}::text[], ${$(3)}::jsonb[], ${$(4)}::text[]) as s(entry_key, code, description, payload, entry_hash)`,
    params: [
      rows.map((r) => r.entryKey),
      rows.map((r) => r.code),
      rows.map((r) => r.description),
      rows.map((r) => r.payload),
      rows.map((r) => r.digest),
    ],
    rows: rows.length,
  };
}

/**
 * A temporary table holding one fetched list, so that the diff against the current rows is one
 * set-based statement instead of a round trip per entry. It lives in the transaction that applies
 * the list (ON COMMIT DROP), begun early when rows spill while the list is still fetched, so it
 * works through a transaction-mode pooler and nothing of it outlasts the apply or a failure.
 */
export class StagingTable {
  readonly name = `refsync_stage_${randomBytes(6).toString('hex')}`;
  readonly #conn: LazyConnection;
  #created = false;
  /** Made outside any transaction (PGlite only): it lasts until drop(). */
  #sessionScoped = false;
  #appended = 0;
  /** A spill still being written (at most one), and how it failed. */
  readonly #spill = new BackgroundWrite();
  readonly #rule: RowWriteRule;

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
    await q.query(
      `create temp table ${this.name} (entry_key text not null, code text, description text, payload jsonb not null, entry_hash text not null)${inTransaction ? ' on commit drop' : ''}`,
    );
    this.#created = true;
    this.#sessionScoped = !inTransaction;
  }

  /**
   * Appends rows: a large batch streams in with COPY FROM STDIN where the database takes it,
   * anything else goes in one statement (arrays unnested server-side, which PGlite understands too). Inside a
   * transaction pass it as `q`: on PGlite, the connection itself waits for the transaction to end.
   */
  async append(rows: readonly NormalizedEntry[], q: Queryable = this.#conn): Promise<void> {
    await this.#spill.settle();
    await this.#create(q);
    if (rows.length === 0) return;
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
    await q.query(
      `insert into ${this.name} (${ENTRY_ROW_COLUMNS}) select * from ${source.from}`,
      source.params,
    );
  }

  /**
   * COPY through the driver's query(): node-postgres runs a submittable (the copy stream) on the
   * held connection and hands it back, so the rows are written to it with backpressure.
   */
  async #copy(rows: readonly NormalizedEntry[], q: Queryable): Promise<void> {
    await copyIn(q, `copy ${this.name} (${ENTRY_ROW_COLUMNS}) from stdin`, copyChunks(rows));
  }

  /** Makes sure the table exists (an empty list still needs one to diff against). */
  async ensure(q: Queryable = this.#conn): Promise<void> {
    await this.#spill.settle();
    await this.#create(q);
  }

  /** Waits for a spill in flight; a table made outside a transaction is dropped, any other went with it. */
  async drop(): Promise<void> {
    await this.#spill.idle();
    if (!this.#created) return;
    this.#created = false;
    if (this.#sessionScoped) await this.#conn.query(`drop table if exists ${this.name}`);
  }
}
