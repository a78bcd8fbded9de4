// The database, whichever driver is behind it (node-postgres or embedded PGlite), as one interface
// the pipeline calls; then what each driver can do, the connection a sync opens only when it needs
// one, the bounded wait for a connection the server refuses, and connections warmed ahead.
import { mkdirSync } from 'node:fs';
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { ConfigError } from '../config/errors.ts';
import type { Logger } from '../util/logger.ts';
import { postgresTls } from './tls.ts';
import { keepWasmAtBaselineTier } from './embedded-code-tier.ts';
import { sharedAnswer } from '../util/shared-answer.ts';
import { lockEmbeddedDatabase, type EmbeddedLockOptions } from './embedded-lock.ts';
import { pgliteSqlSession, pgSqlSession, type SqlSession, type SqlSessionOptions } from './sql-session.ts';
import { exponentialDelay } from '../util/backoff.ts';
import { DatabaseRefusedError, isConnectionRefusal } from './refused.ts';

export type { SqlResult } from './sql-session.ts';

export interface QueryResult<R> {
  rows: R[];
  affectedRows?: number;
}

/** What the pipeline needs of a connection: parameterised SQL, and scripts. Both drivers provide them. */
export interface Queryable {
  query<R = Record<string, unknown>>(text: string, params?: unknown[]): Promise<QueryResult<R>>;
  /**
   * Runs statements without parameters (their values quoted in their text) in one round trip, in
   * order; the first failure stops the rest and is thrown. Inside a transaction they are part of
   * it; outside one, Postgres runs them as one transaction of their own. For DDL: the same
   * statements in a DO block cost Postgres about twice the time, since PL/pgSQL compiles the block
   * and prepares each statement again (docs/performance.md, P1).
   */
  script(statements: readonly string[]): Promise<void>;
}

/** Statements as the text of one simple-protocol message. */
function scriptText(statements: readonly string[]): string {
  return statements.join(';\n');
}

export type DatabaseKind = 'pg' | 'pglite';

/**
 * The work of a transaction. `opened` holds the rows of the transaction's opening statement, when
 * one was given (else it is empty). `atCommit` takes a statement without parameters (its values
 * quoted in its text) to run last, in the COMMIT's own round trip on Postgres: work whose end needs
 * no answer (a NOTIFY) saves a round trip. Its failure rolls the transaction back and is thrown.
 */
export type TransactionWork<T> = (tx: Queryable, opened: Array<Record<string, unknown>>, atCommit: (statement: string) => void) => Promise<T>;

/**
 * One held connection. Behind a transaction-mode pooler (PgBouncer, managed poolers) only what
 * happens inside one transaction is sure to share a server session, so state that must last (temp
 * tables, locks, timeouts) lives in a transaction, never in the session.
 */
export interface Connection extends Queryable {
  /**
   * Runs fn in one transaction on this connection; commits when it resolves, rolls back when it
   * throws. `opening`, a statement without parameters (its values quoted in its text), runs first,
   * in the BEGIN's own round trip on Postgres, and fn gets its rows: a transaction that must start
   * with a read (a lock and what it guards) saves a round trip.
   */
  transaction<T>(fn: TransactionWork<T>, opening?: string): Promise<T>;
  /** Begins a transaction (with the per-transaction timeouts) that the caller ends with commit or rollback. */
  begin(): Promise<void>;
  /**
   * Runs one statement without parameters (its values quoted in its text) as a transaction of its
   * own, with the per-transaction timeouts, in one round trip on Postgres: no BEGIN, no COMMIT.
   * Returns its rows. For work that is whole in one statement (a function that locks, reads and writes).
   */
  alone(statement: string): Promise<Array<Record<string, unknown>>>;
}

export interface Database extends Queryable {
  readonly kind: DatabaseKind;
  /**
   * A session for SQL typed by a person (`refsync sql`): one connection held until it is closed,
   * read-only unless `write` (sql-session.ts).
   */
  sqlSession(options: SqlSessionOptions): Promise<SqlSession>;
  /** Runs fn in one transaction on one connection, as Connection#transaction does. */
  transaction<T>(fn: TransactionWork<T>, opening?: string): Promise<T>;
  /** Holds one connection for fn (session state such as LISTEN or temp tables stays on it). */
  withConnection<T>(fn: (conn: Connection) => Promise<T>): Promise<T>;
  /**
   * Whether the pool gives a working connection now, for readiness and the database gauge: a
   * `select 1` on a connection of the pool, so it counts in the pool's size (the budget holds
   * however many ask). One probe at a time, its answer reused for a second: callers at once share
   * it. Throws what the server answered, a refusal at once.
   */
  probe(): Promise<void>;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** postgres:// URL; when absent, embedded PGlite in dataDir. */
  url?: string;
  /** PGlite data folder; default ./.refsync/pgdata. 'memory://' keeps it in memory. */
  dataDir?: string;
  poolSize?: number;
  /** How long an idle pooled connection stays open before the pool closes it. Default 30 s. */
  idleTimeoutMs?: number;
  /**
   * Per-statement limit inside every transaction, so a locked table cannot hang a sync forever. Set
   * with SET LOCAL when a transaction begins, not as a startup parameter, which poolers refuse.
   */
  statementTimeoutMs?: number;
  lockTimeoutMs?: number;
  logger?: Logger;
  applicationName?: string;
  /**
   * How long a connection the server refuses (its connection limit reached, a restart) is asked for
   * again before the work that needed it fails with a DatabaseRefusedError. Default 10 s.
   */
  refusedWaitMs?: number;
  /**
   * The embedded folder's lock (embedded-lock.ts): how long to wait for the process that holds it
   * (default: as long as it takes) and how to say so.
   */
  embeddedLock?: EmbeddedLockOptions;
}

/** Where the embedded database lives when DATABASE_URL is unset (docs/contract.md). */
export const EMBEDDED_DATA_DIR = './.refsync/pgdata';

/**
 * The timeouts as SET LOCAL: they end with the transaction, so nothing leaks to a pooled session. In
 * a message of several statements without a BEGIN they hold for that message's implicit transaction.
 */
function transactionTimeouts(options: OpenDatabaseOptions): string {
  const ms = (value: number | undefined, fallback: number) => Math.max(0, Math.trunc(value ?? fallback));
  return `set local statement_timeout = ${ms(options.statementTimeoutMs, 120_000)}; set local lock_timeout = ${ms(options.lockTimeoutMs, 30_000)}`;
}

/** The last result's rows of a message of several statements (node-postgres answers it with an array). */
function lastRows(results: pg.QueryResult | pg.QueryResult[]): Array<Record<string, unknown>> {
  return (Array.isArray(results) ? results.at(-1)! : results).rows;
}

// int8 (ids, counts) as JS numbers: ids here stay far below 2^53, and callers compare them as numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

/** A connection's settings: TLS as the URL asks for it. */
function clientConfig(options: OpenDatabaseOptions & { url: string }): pg.ClientConfig {
  const tls = postgresTls(options.url);
  return {
    connectionString: tls.connectionString,
    ...(tls.ssl === undefined ? {} : { ssl: tls.ssl }),
    application_name: options.applicationName ?? 'refsync',
    connectionTimeoutMillis: 10_000,
  };
}

/** The node-postgres pool, and a listener for connections lost while idle. */
function createPool(options: OpenDatabaseOptions & { url: string }): pg.Pool {
  const pool = new pg.Pool({ ...clientConfig(options), max: options.poolSize ?? 10, idleTimeoutMillis: options.idleTimeoutMs ?? 30_000 });
  // A connection terminated while idle in the pool (Postgres restart, pg_terminate_backend) emits an
  // error on the pool; without a listener that error would crash the process.
  pool.on('error', (err) => options.logger?.warn({ err: err.message }, 'idle Postgres connection lost'));
  return pool;
}

/** node-postgres's query as a Queryable: rows, and rowCount as affectedRows. */
function pgQueryable(client: pg.PoolClient): Queryable {
  return {
    async query<R>(text: string, params?: unknown[]) {
      const res = await client.query(text, params as unknown[]);
      return { rows: res.rows as R[], affectedRows: res.rowCount ?? 0 };
    },
    async script(statements) {
      // Without parameters node-postgres sends the text as one simple-protocol message.
      if (statements.length) await client.query(scriptText(statements));
    },
  };
}

/** A checked-out client as a Connection; `timeouts` are the transaction's SET LOCAL statements. */
function pgConnection(client: pg.PoolClient, timeouts: string): Connection {
  const conn = pgQueryable(client);
  const begin = `begin; ${timeouts}`;
  return {
    ...conn,
    async begin() {
      // One round trip: a parameterless multi-statement query goes as one simple-protocol message.
      await conn.query(begin);
    },
    async transaction(fn, opening) {
      if (opening === undefined) {
        await this.begin();
        return commitAfter(conn, (tx, atCommit) => fn(tx, [], atCommit));
      }
      let opened: Array<Record<string, unknown>>;
      try {
        // The opening statement travels in the BEGIN's message; the last result is its own.
        opened = lastRows((await client.query(`${begin}; ${opening}`)) as unknown as pg.QueryResult | pg.QueryResult[]);
      } catch (err) {
        await conn.query('rollback').catch(() => undefined);
        throw err;
      }
      return commitAfter(conn, (tx, atCommit) => fn(tx, opened, atCommit));
    },
    async alone(statement) {
      // Postgres runs a message of several statements as one implicit transaction, which it ends
      // itself: committed after the last, rolled back by any failure.
      return lastRows((await client.query(`${timeouts}; ${statement}`)) as unknown as pg.QueryResult | pg.QueryResult[]);
    },
  };
}

/** Runs fn with one client of the pool held, and gives the client back (or drops it when its connection broke). */
async function withPgClient<T>(pool: pg.Pool, options: OpenDatabaseOptions, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const logger = options.logger;
  const client = await connectWithin(pool, options.refusedWaitMs ?? 10_000);
  let broken: Error | undefined;
  // pg-pool listens for errors only while a client is idle; a checked-out client whose
  // connection dies (Postgres restart, terminated backend) would otherwise emit an unhandled
  // 'error' and end the process. The failure still reaches the caller through its query.
  const onError = (err: Error) => {
    broken = err;
    logger?.warn({ err: err.message }, 'Postgres connection lost while in use');
  };
  client.on('error', onError);
  try {
    return await fn(client);
  } catch (err) {
    broken ??= err as Error;
    throw err;
  } finally {
    client.off('error', onError);
    // A connection that failed mid-statement may be in an unknown state: drop it from the pool.
    client.release(broken && !(broken instanceof pg.DatabaseError) ? broken : undefined);
  }
}

/** How long a probe's answer is reused (sharedAnswer). */
const PROBE_REUSE_MS = 1_000;

function openPg(options: OpenDatabaseOptions & { url: string }): Database {
  const pool = createPool(options);
  const timeouts = transactionTimeouts(options);
  let closed = false;
  const held = <T>(fn: (client: pg.PoolClient) => Promise<T>) => withPgClient(pool, options, fn);
  return {
    kind: 'pg',
    query: (text, params) => held((client) => pgQueryable(client).query(text, params)),
    script: (statements) => held((client) => pgQueryable(client).script(statements)),
    sqlSession: async (sessionOptions) => pgSqlSession(() => connectWithin(pool, options.refusedWaitMs ?? 10_000), sessionOptions),
    async withConnection(fn) {
      return held((client) => fn(pgConnection(client, timeouts)));
    },
    async transaction(fn, opening) {
      return this.withConnection((conn) => conn.transaction(fn, opening));
    },
    probe: sharedAnswer(async () => {
      // pool.connect, not connectWithin: a refusal is the answer, not something to wait out. An idle
      // connection that broke is dropped (release with the error), so the next probe opens a new one.
      const client = await pool.connect();
      // A checked-out client whose connection dies emits 'error', which unheard would end the
      // process; the failure reaches the probe through its query.
      const ignore = () => undefined;
      client.on('error', ignore);
      try {
        await client.query('select 1');
        client.off('error', ignore);
        client.release();
      } catch (err) {
        client.off('error', ignore);
        client.release(err as Error);
        throw err;
      }
    }, PROBE_REUSE_MS),
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}

/**
 * PGlite, loaded only when no DATABASE_URL is given. It is an optional dependency: a checkout has it
 * (`refsync demo`, `refsync sync` without a server), the container image leaves it out. Its code
 * stays at V8's baseline tier (embedded-code-tier.ts): short commands end two seconds sooner.
 */
async function loadPglite(): Promise<typeof PGlite> {
  keepWasmAtBaselineTier();
  try {
    return (await import('@electric-sql/pglite')).PGlite;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw err;
    throw new ConfigError('DATABASE_URL: not set, and the embedded database (PGlite) is not installed here; set DATABASE_URL');
  }
}

async function openPglite(options: OpenDatabaseOptions): Promise<Database> {
  const dataDir = options.dataDir ?? EMBEDDED_DATA_DIR;
  const inMemory = dataDir.startsWith('memory://');
  if (!inMemory) mkdirSync(dataDir, { recursive: true });
  // Taken before PGlite reads a file of the folder, given back after it wrote its last.
  const lock = inMemory ? undefined : await lockEmbeddedDatabase(dataDir, options.embeddedLock);
  let client: PGlite;
  try {
    client = await (await loadPglite()).create(dataDir);
  } catch (err) {
    await lock?.release();
    throw err;
  }
  const wrap = (q: Pick<PGlite, 'query' | 'exec'>): Queryable => ({
    async query<R>(text: string, params?: unknown[]) {
      const res = await q.query<R>(text, params);
      const result: QueryResult<R> = { rows: res.rows };
      if (res.affectedRows !== undefined) result.affectedRows = res.affectedRows;
      return result;
    },
    async script(statements) {
      if (statements.length) await q.exec(scriptText(statements));
    },
  });
  let closed = false;
  // PGlite is one session that serialises queries and runs transactions exclusively, so "holding a
  // connection" is just using it; its transactions keep other callers' queries out.
  const transaction: Connection['transaction'] = (fn, opening) =>
    client.transaction(async (tx) => {
      const q = wrap(tx);
      const closing: string[] = [];
      const result = await fn(q, await openingRows(q, opening), (statement) => closing.push(statement));
      // One statement a query here, and no round trip to save: each in turn before PGlite commits.
      for (const statement of closing) await q.query(statement);
      return result;
    });
  const begin = `begin; ${transactionTimeouts(options)}`;
  const alone: Connection['alone'] = (statement) => transaction(async (_tx, opened) => opened, statement);
  return {
    kind: 'pglite',
    ...wrap(client),
    sqlSession: async (sessionOptions) => pgliteSqlSession(client, sessionOptions),
    withConnection: (fn) => fn({ ...wrap(client), transaction, begin: () => client.exec(begin).then(() => undefined), alone }),
    transaction,
    probe: () => client.query('select 1').then(() => undefined),
    async close() {
      if (closed) return;
      closed = true;
      try {
        await client.close();
      } finally {
        await lock?.release();
      }
    },
  };
}

/** The opening statement's rows, run as the next statement of a transaction already begun (none: no rows). */
export async function openingRows(tx: Queryable, opening: string | undefined): Promise<Array<Record<string, unknown>>> {
  return opening === undefined ? [] : (await tx.query<Record<string, unknown>>(opening)).rows;
}

/**
 * Runs `fn` inside the transaction already begun on `conn`, then commits, with the statements fn
 * gave atCommit in the COMMIT's message (one round trip: a message of several statements without
 * parameters); rolls back if it throws, or if one of them fails (the rest of the message, COMMIT
 * with it, is then skipped).
 */
export async function commitAfter<T>(conn: Queryable, fn: (tx: Queryable, atCommit: (statement: string) => void) => Promise<T>): Promise<T> {
  const closing: string[] = [];
  try {
    const result = await fn(conn, (statement) => closing.push(statement));
    await conn.query([...closing, 'commit'].join('; '));
    return result;
  } catch (err) {
    await conn.query('rollback').catch(() => undefined);
    throw err;
  }
}

export async function openDatabase(options: OpenDatabaseOptions = {}): Promise<Database> {
  if (options.url) return openPg({ ...options, url: options.url });
  return openPglite(options);
}

// ── bigint arrays as parameters ──

/**
 * A bigint[] parameter as Postgres's array text, made in one join. node-postgres turns an array
 * parameter into that text element by element (each number a quoted, escaped string, concatenated
 * on): for the million ids of a resync where every entry changed, about 90 MB of V8 heap at once,
 * which took the sync's peak RSS past its 256 MiB; this is the 8 MB the text takes.
 */
export function bigintArrayText(ids: readonly number[]): string {
  return `{${ids.join(',')}}`;
}

// ── What the database can do ──

/**
 * What the opened database can do, declared once from its driver so that no other module asks
 * "Postgres or PGlite?" itself. node-postgres reaches a real server; PGlite is one embedded session
 * inside this process.
 */
export interface Capabilities {
  /**
   * COPY FROM STDIN / TO STDOUT as a stream through the driver's query(). PGlite cannot take a copy
   * stream that way (and is left broken by trying), so bulk writes fall back to one unnest statement.
   */
  copy: boolean;
  /**
   * Each connection is a server session of its own, shared with other processes. PGlite is one
   * session inside this process: an advisory lock there excludes nobody, and a transaction held
   * open on it would take in every other caller's statements, so run claims and early staging
   * transactions are kept to the in-process bookkeeping instead.
   */
  ownSessions: boolean;
  /** Embedded in this process: nothing to reach over a network, migrated when it is opened. */
  embedded: boolean;
  /** LISTEN on a held connection, woken by NOTIFY from other processes (nothing else can reach PGlite). */
  listen: boolean;
}

const byKind: Record<Database['kind'], Readonly<Capabilities>> = {
  pg: Object.freeze({ copy: true, ownSessions: true, listen: true, embedded: false }),
  pglite: Object.freeze({ copy: false, ownSessions: false, listen: false, embedded: true }),
};

/** The capabilities of an opened database. */
export function capabilitiesOf(db: Pick<Database, 'kind'>): Readonly<Capabilities> {
  return byKind[db.kind];
}

// ── A connection opened when first needed ──

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

// ── Waiting out a refused connection ──
// The pool's bounded wait for a connection the server refuses. A managed Postgres shared with other
// applications runs out of slots for moments (another job's burst, a deploy's overlap): asking
// again a little later keeps a list from failing for a slot that frees a second after.

/**
 * A client of the pool; a refused connection (refused.ts) is asked for again, with backoff, until
 * `waitMs` has passed, then DatabaseRefusedError. Other connect errors are thrown at once, as before.
 */
export async function connectWithin(pool: pg.Pool, waitMs: number): Promise<pg.PoolClient> {
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      return await pool.connect();
    } catch (err) {
      if (!isConnectionRefusal(err)) throw err;
      const waited = Date.now() - started;
      if (waited >= waitMs) throw new DatabaseRefusedError(err, waited);
      await new Promise((resolve) => setTimeout(resolve, Math.min(exponentialDelay(100, 2000, attempt + 1), waitMs - waited)));
    }
  }
}

// ── Connections warmed ahead ──
// Connections opened while the network is the wait, not when the first apply needs one.

/**
 * Asks the pool for `count` connections at once and gives each back once `warm` (a statement) ran
 * on it: those it had to open stay idle in it for the applies to come. A first sync's lists all
 * reach their applies together, a latency after they were asked for; a new backend's start (fork,
 * authentication, its first catalog reads) then ran in their way on the same cores. `warm` reads
 * the catalog the applies' first statements would (a new session's first statement on a table loads
 * the table and its indexes: 3 ms for refdata.entries). Failures are dropped here: an apply that
 * cannot get a connection reports it. PGlite has no connections to open.
 */
export function warmConnections(db: Database, count: number, warm?: string): void {
  if (db.kind !== 'pg') return;
  for (let i = 0; i < count; i++)
    void db
      .withConnection(async (conn) => {
        if (warm) await conn.query(warm);
      })
      .catch(() => undefined);
}
