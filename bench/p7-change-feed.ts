// P7: a downstream job reading 1,000,000 changes through refdata.change_feed in pages of 10,000,
// against the id cursor the feed replaces (`select * from refdata.entry_changes where id > $1 order
// by id limit 10000`) over the same rows. The changes are written by 100 transactions (as 100 syncs
// would be), with entries of realistic size before and after. Both readers run on one connection,
// alternately (which goes first alternates too), each pass reading every row; the figure is the
// median pass's throughput.
//
//   node bench/p7-change-feed.ts [changes]      (default 1000000)
import type { Database } from '../src/db/database.ts';
import { createBenchDatabase, figure, machineLine, median, printFigures, runMain, type Figure } from './lib.ts';

export interface P7Options {
  changes?: number;
  pageSize?: number;
  /** Passes of each reader, alternating (default 3). */
  repeats?: number;
  log?: (line: string) => void;
}

const TRANSACTIONS = 100;

/** The changes, in TRANSACTIONS transactions of one snapshot each; the table analyzed, and all of it served by the feed. */
async function writeChanges(db: Database, changes: number): Promise<void> {
  const run = await db.query<{ id: string }>("insert into refdata.sync_runs (environment, trigger) values ('p7', 'cli') returning id");
  const perTransaction = Math.ceil(changes / TRANSACTIONS);
  for (let written = 0; written < changes; written += perTransaction) {
    const rows = Math.min(perTransaction, changes - written);
    await db.transaction(async (tx) => {
      const snap = await tx.query<{ id: string }>(
        "insert into refdata.snapshots (run_id, environment, list_key, variant, fetched_at, status) values ($1, 'p7', 'accessorials', '', now(), 'ok') returning id",
        [run.rows[0]!.id],
      );
      await tx.query(
        `insert into refdata.entry_changes (snapshot_id, environment, list_key, variant, entry_key, code, change, before, after, changed_fields, detected_at)
         select $1, 'p7', 'accessorials', '', 'G' || lpad(g::text, 7, '0'), 'G' || lpad(g::text, 7, '0'), 'modified',
                jsonb_build_object('id', g, 'code', 'G' || lpad(g::text, 7, '0'), 'description', 'Generated accessorial ' || g,
                                   'long_description', repeat('An accessorial charge applied to the shipment. ', 2), 'is_charge_code', true),
                jsonb_build_object('id', g, 'code', 'G' || lpad(g::text, 7, '0'), 'description', 'Generated accessorial ' || g || ' (changed)',
                                   'long_description', repeat('An accessorial charge applied to the shipment. ', 2), 'is_charge_code', true),
                array['description'], now()
         from generate_series($2::int + 1, $2::int + $3::int) g`,
        [snap.rows[0]!.id, written, rows],
      );
    });
  }
  await db.query('vacuum analyze refdata.entry_changes');
  await servedInFull(db, changes);
}

/**
 * Waits (bounded) until the feed serves every change written: its fence is the server's oldest open
 * write transaction, and another process's may hold it a moment after the last commit here.
 */
async function servedInFull(db: Database, changes: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const { rows } = await db.query<{ n: number }>('select count(*)::int as n from refdata.change_feed(null, null)');
    if (rows[0]!.n === changes) return;
    if (Date.now() > deadline) throw new Error(`P7: the feed serves ${rows[0]!.n} of ${changes} changes after 120 s (an open write transaction holds it)`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Reads every change, page by page, passing back the last row's cursor; returns [ms, rows]. */
async function readAll(db: Database, sql: string, cursorOf: (row: Record<string, unknown>) => unknown, start: unknown, pageSize: number) {
  const started = performance.now();
  let after = start;
  let total = 0;
  for (;;) {
    const { rows } = await db.query<Record<string, unknown>>(sql, [after, pageSize]);
    total += rows.length;
    if (rows.length < pageSize) break;
    after = cursorOf(rows.at(-1)!);
  }
  return { ms: performance.now() - started, rows: total };
}

export async function runP7(options: P7Options = {}): Promise<Figure[]> {
  const changes = options.changes ?? 1_000_000;
  const pageSize = options.pageSize ?? 10_000;
  const repeats = options.repeats ?? 3;
  const log = options.log ?? console.log;
  const bench = await createBenchDatabase({ prefix: 'refsync_bench_p7', poolSize: 2 });
  try {
    const db = bench.db;
    log(await machineLine(db, false));
    const started = performance.now();
    await writeChanges(db, changes);
    log(`P7 setup: ${changes} changes in ${TRANSACTIONS} transactions written in ${Math.round(performance.now() - started)} ms (database ${bench.name})`);
    const feed = () => readAll(db, 'select * from refdata.change_feed($1, $2)', (r) => r.position, null, pageSize);
    const ids = () => readAll(db, 'select * from refdata.entry_changes where id > $1 order by id limit $2', (r) => r.id, 0, pageSize);
    const feedMs: number[] = [];
    const idMs: number[] = [];
    for (let i = 0; i < repeats; i++) {
      // Which goes first alternates: a VM speeding up or slowing down over the passes (a first pass
      // of 10 s, then 8 and 7, where the id cursor's took 7, 6.5 and 6.5) favoured whichever read second.
      const pair = [
        [feed, feedMs],
        [ids, idMs],
      ] as const;
      for (const [reader, into] of i % 2 === 0 ? pair : [pair[1], pair[0]]) {
        const pass = await reader();
        if (pass.rows !== changes) throw new Error(`P7: a pass read ${pass.rows} of ${changes} changes`);
        into.push(pass.ms);
      }
    }
    const connections = await db.query<{ n: number }>(
      "select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = 'refsync-bench'",
    );
    log(`P7 passes (ms): feed ${feedMs.map(Math.round).join(', ')}; id cursor ${idMs.map(Math.round).join(', ')}`);
    const perSecond = (ms: number) => changes / (ms / 1000);
    const feedRate = perSecond(median(feedMs));
    const idRate = perSecond(median(idMs));
    const notes = `${changes} changes in pages of ${pageSize}, median of ${repeats} passes each, alternating which goes first; ${connections.rows[0]!.n} connection(s) open`;
    return [
      figure('P7 change feed read', Math.round(feedRate), 'changes/s', 'id cursor', Math.round(idRate), { target: { ratio: 0.8, better: 'higher' }, notes }),
    ];
  } finally {
    await bench.drop();
  }
}

if (import.meta.main) {
  // Read here, not in runP7: under `npm run bench -- p7` argv[2] is the benchmark's name.
  const changes = process.argv[2] ? Number(process.argv[2]) : undefined;
  runMain(async () => printFigures(await runP7(changes ? { changes } : {})));
}
