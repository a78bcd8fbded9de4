import { capabilitiesOf } from './capabilities.ts';
import { commitAfter, openingRows, type Connection, type Database, type Queryable, type QueryResult, type TransactionWork } from './database.ts';

/**
 * A pool connection taken at its first query rather than up front. A sync spends most of its time
 * fetching, and a small list needs a connection only to apply; holding one through the fetch made
 * targets queue behind a pool smaller than the number in flight. Once taken, it is the same session
 * until release, so temp tables made by an early spill are still there when the list is applied.
 */
export class LazyConnection implements Connection {
  readonly #db: Database;
  readonly #refusal: (() => Error | undefined) | undefined;
  #connection: Promise<Connection> | undefined;
  #held: Promise<unknown> | undefined;
  #finish: ((err?: unknown) => void) | undefined;
  /** A transaction begun by openEarly that the next transaction(fn) runs in and ends. */
  #early = false;

  /**
   * `refusal`, when it returns an error, refuses every statement but a rollback with it, in a
   * transaction too (a target past its deadline: the write stops at its next statement, and its
   * commit is refused).
   */
  constructor(db: Database, refusal?: () => Error | undefined) {
    this.#db = db;
    this.#refusal = refusal;
  }

  #check(text: unknown): void {
    if (typeof text === 'string' && /^\s*rollback\b/i.test(text)) return;
    const refused = this.#refusal?.();
    if (refused) throw refused;
  }

  /** tx with every statement checked first (a COPY stream, not a string, is checked like any other). */
  #guarded(tx: Queryable): Queryable {
    if (!this.#refusal) return tx;
    return {
      query: <R>(text: string, params?: unknown[]) => {
        this.#check(text);
        return tx.query<R>(text, params);
      },
      script: (statements) => {
        this.#check(statements[0]);
        return tx.script(statements);
      },
    };
  }

  #get(): Promise<Connection> {
    this.#connection ??= new Promise<Connection>((resolve, reject) => {
      this.#held = this.#db
        .withConnection(
          (conn) =>
            new Promise<void>((done, fail) => {
              this.#finish = (err) => (err === undefined ? done() : fail(err));
              resolve(conn);
            }),
        )
        .catch(reject);
    });
    return this.#connection;
  }

  async query<R = Record<string, unknown>>(text: string, params?: unknown[]): Promise<QueryResult<R>> {
    this.#check(text);
    return (await this.#get()).query<R>(text, params);
  }

  async script(statements: readonly string[]): Promise<void> {
    this.#check(statements[0]);
    await (await this.#get()).script(statements);
  }

  async transaction<T>(fn: TransactionWork<T>, opening?: string): Promise<T> {
    this.#check('begin');
    const conn = await this.#get();
    // Checked once more after fn: the commit that follows is refused too.
    const guarded: TransactionWork<T> = async (tx, opened, atCommit) => {
      const result = await fn(this.#guarded(tx), opened, atCommit);
      this.#check('commit');
      return result;
    };
    if (!this.#early) return conn.transaction(guarded, opening);
    this.#early = false;
    // Begun earlier: the opening statement is the transaction's next one.
    return commitAfter(conn, async (tx, atCommit) => guarded(tx, await openingRows(tx, opening), atCommit));
  }

  /** A statement as a transaction of its own; never while a transaction begun by openEarly waits (it would run inside it). */
  async alone(statement: string): Promise<Array<Record<string, unknown>>> {
    if (this.#early) throw new Error('a statement alone was asked for inside a transaction begun early');
    this.#check(statement);
    return (await this.#get()).alone(statement);
  }

  async begin(): Promise<void> {
    this.#check('begin');
    await (await this.#get()).begin();
  }

  /**
   * Begins now the transaction that the next transaction(fn) runs in, so that work done before it
   * (a staging table filled while the list is still fetched) shares its server session even behind
   * a transaction-mode pooler, and is committed or rolled back with it. Returns false, opening
   * nothing, on PGlite: one in-process session that is never pooled, where an open transaction
   * would take in every other caller's statements.
   */
  async openEarly(): Promise<boolean> {
    if (!capabilitiesOf(this.#db).ownSessions) return false;
    await this.begin();
    this.#early = true;
    return true;
  }

  /**
   * Returns the connection to the pool. Pass the error that ended the work, if any: the pool then
   * decides, as for any held connection, whether the session is still fit to reuse.
   */
  async release(err?: unknown): Promise<void> {
    if (!this.#connection) return;
    if (this.#early) {
      this.#early = false;
      await (await this.#connection).query('rollback').catch(() => undefined);
    }
    this.#finish?.(err);
    await this.#held?.catch(() => undefined);
  }
}
