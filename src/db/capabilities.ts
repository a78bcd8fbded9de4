import type { Database } from './database.ts';

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
