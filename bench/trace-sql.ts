// BENCH_TRACE_SQL and BENCH_EXPLAIN for a bench's database: every statement of 5 ms or more timed
// from outside, and EXPLAIN (ANALYZE) in place of the statements named (docs/performance.md, "Where
// the time goes"). The sync children use it, and P5, which syncs in its own process.
import type { Database, Queryable } from '../src/db/database.ts';

/**
 * Whether BENCH_EXPLAIN names this statement: `|`-separated prefixes of the statement with its
 * whitespace collapsed, or `~text` for a statement containing text (the diff's CREATE TABLE AS,
 * whose table name is random).
 */
function explained(text: string): boolean {
  const patterns = process.env.BENCH_EXPLAIN?.split('|') ?? [];
  const flat = text.replace(/\s+/g, ' ').trim();
  return patterns.some((p) => (p.startsWith('~') ? text.includes(p.slice(1)) : flat.startsWith(p)));
}

/** Times every statement of held connections (BENCH_TRACE_SQL=1): where the database time goes, seen from outside. */
export function traced(inner: Database): Database {
  /** Runs a statement (or script) and reports it when it took 5 ms or more; `what` names it. */
  const timed = async <T>(what: () => string, run: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await run();
    } finally {
      const ms = performance.now() - started;
      if (ms >= 5) process.stderr.write(`[sql ${ms.toFixed(0).padStart(6)} ms] ${what().replace(/\s+/g, ' ').slice(0, 160)}\n`);
    }
  };
  const time = (q: Queryable): Queryable => ({
    async query<R>(text: string, params?: unknown[]) {
      if (typeof text === 'string' && explained(text)) {
        // BENCH_EXPLAIN_ANALYZE runs EXPLAIN ANALYZE in place of the statement (whose result is then
        // empty): for statements whose result the pipeline does not read, such as the apply's writes.
        const analyze = Boolean(process.env.BENCH_EXPLAIN_ANALYZE);
        const plan = await q.query<{ 'QUERY PLAN': string }>(`explain ${analyze ? '(analyze, buffers, wal) ' : ''}${text}`, params);
        process.stderr.write(`${plan.rows.map((r) => r['QUERY PLAN']).join('\n')}\n`);
        if (analyze) return { rows: [], rowCount: 0 } as never;
      }
      // A COPY is sent as an object (a pg-copy-streams stream in, copyOut's submittable out), not text:
      // named as such (a throw here would leave it unread and hang the sync).
      return timed(
        () => (typeof text === 'string' ? text : '(copy)'),
        () => q.query<R>(text, params),
      );
    },
    script: (statements) =>
      timed(
        () => statements.join('; '),
        () => q.script(statements),
      ),
  });
  return {
    ...inner,
    withConnection: (fn) =>
      inner.withConnection((conn) => {
        const q = time(conn);
        return fn({
          query: q.query,
          script: q.script,
          begin: () => conn.begin(),
          transaction: (f, opening) => conn.transaction((tx, opened, atCommit) => f(time(tx), opened, atCommit), opening),
          alone: (statement) => conn.alone(statement),
        });
      }),
  } as Database;
}

/** The database traced when BENCH_TRACE_SQL is set, else as it is. */
export function tracedWhenAsked(db: Database): Database {
  return process.env.BENCH_TRACE_SQL ? traced(db) : db;
}
