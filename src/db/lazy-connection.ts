import type { Connection, Database, Queryable, QueryResult } from './database.ts';

/**
 * A pool connection taken at its first query rather than up front. A sync spends most of its time
 * fetching, and a small list needs a connection only to apply; holding one through the fetch made
 * targets queue behind a pool smaller than the number in flight. Once taken, it is the same session
 * until release, so temp tables made by an early spill are still there when the list is applied.
 */
export class LazyConnection implements Connection {
  readonly #db: Database;
  #connection: Promise<Connection> | undefined;
  #held: Promise<unknown> | undefined;
  #finish: ((err?: unknown) => void) | undefined;

  constructor(db: Database) {
    this.#db = db;
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
    return (await this.#get()).query<R>(text, params);
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return (await this.#get()).transaction(fn);
  }

  /**
   * Returns the connection to the pool. Pass the error that ended the work, if any: the pool then
   * decides, as for any held connection, whether the session is still fit to reuse.
   */
  async release(err?: unknown): Promise<void> {
    if (!this.#connection) return;
    this.#finish?.(err);
    await this.#held?.catch(() => undefined);
  }
}
