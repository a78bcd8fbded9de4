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
   * Session advisory locks that tell processes apart. PGlite is one session shared by the whole
   * process, so a lock held there excludes nobody in it: a promise chain or an in-process set stands in.
   */
  sessionLocks: boolean;
  /** LISTEN on a held connection, woken by NOTIFY from other processes (nothing else can reach PGlite). */
  listen: boolean;
}

const byKind: Record<Database['kind'], Readonly<Capabilities>> = {
  pg: Object.freeze({ copy: true, sessionLocks: true, listen: true }),
  pglite: Object.freeze({ copy: false, sessionLocks: false, listen: false }),
};

/** The capabilities of an opened database. */
export function capabilitiesOf(db: Pick<Database, 'kind'>): Readonly<Capabilities> {
  return byKind[db.kind];
}
