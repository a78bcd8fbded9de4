// docs/change-feed.md's exactly-once recipe, tried as a job is run: a child process that loads each
// batch of the feed and stores its position in one transaction, SIGKILLed between its load and its
// commit again and again, then started again. Every change ends up loaded exactly once: the load of a
// killed batch rolls back with its position, and the next run reads that batch again.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/db.ts';
import { allPositions } from '../cli/feed-helpers.ts';
import { feedCaughtUp } from './feed-reader.ts';

const t = useTestDatabase();
const job = fileURLToPath(new URL('./exactly-once-job.ts', import.meta.url));

/** Runs the job once; SIGKILLs it at its `kill`-th load (between load and commit), or lets it finish. */
function runJob(kill: number | null): Promise<'killed' | 'done'> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [job, t.url], { stdio: ['pipe', 'pipe', 'inherit'] });
    let loads = 0;
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      for (let nl = out.indexOf('\n'); nl >= 0; nl = out.indexOf('\n')) {
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        if (line !== 'loaded') continue;
        loads += 1;
        if (loads === kill) child.kill('SIGKILL');
        else child.stdin.write('commit\n');
      }
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve('killed');
      else if (code === 0) resolve('done');
      else reject(new Error(`the job exited ${code ?? signal}`));
    });
  });
}

describe('the exactly-once recipe as a job', () => {
  it('loads every change exactly once though it is killed between its load and its commit, run after run', async () => {
    await t.db.query('create table etl_loaded (position text not null, id bigint not null)');
    await t.db.query('create table etl_feed_position (job text primary key, position text)');
    await t.db.query("insert into etl_feed_position values ('warehouse', null)");
    const { rows: runs } = await t.db.query<{ id: string }>("insert into refdata.sync_runs (environment, trigger) values ('feed', 'cli') returning id");
    for (let i = 0; i < 12; i++) {
      const { rows: snap } = await t.db.query<{ id: string }>(
        "insert into refdata.snapshots (run_id, environment, list_key, variant, fetched_at, status) values ($1, 'feed', 'shipment_modes', '', now(), 'ok') returning id",
        [runs[0]!.id],
      );
      await t.db.query(
        `insert into refdata.entry_changes (snapshot_id, environment, list_key, entry_key, change)
         select $1, 'feed', 'shipment_modes', 'k' || g, 'added' from generate_series(1, 37) g`,
        [snap[0]!.id],
      );
    }
    // The server's fence moves with other test files' transactions: wait until all 444 are served.
    await feedCaughtUp(t.db);
    const expected = await allPositions(t.db);
    expect(expected).toHaveLength(444);

    // 9 batches of 50. The first run is killed at its first load; every later run commits one batch
    // and is killed at its next load, until a run finds nothing more: 9 kills, each before a commit.
    const outcomes: string[] = [];
    while (outcomes.at(-1) !== 'done') outcomes.push(await runJob(outcomes.length === 0 ? 1 : 2));
    expect(outcomes.filter((o) => o === 'killed')).toHaveLength(9);
    const { rows } = await t.db.query<{ position: string; n: number }>(
      'select position, count(*)::int as n from etl_loaded group by position order by position',
    );
    expect(rows.filter((r) => r.n !== 1)).toEqual([]);
    expect(rows.map((r) => r.position)).toEqual(expected);
  }, 180_000);
});
