// The change feed across a restore: a database dumped from one cluster and restored into another
// (pg_dump | pg_restore), two private servers of this file's own. The restored history is served
// whole and in its order once refsync has recorded the restore (as a new feed epoch), and is refused
// in one line before (never "nothing new"); every change written after it comes after; a position
// from before it resumes with every later change; a position the restored database never had (the
// old cluster went on after the dump) is refused naming the restore.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { FeedPositionError, FeedRestoredError, readChangeFeed } from '../../src/read/change-feed.ts';
import { allPositions, writeChanges } from '../cli/feed-helpers.ts';
import { runCli } from '../queue/helpers.ts';
import { canStartPrivatePostgres, startPrivatePostgres, type PrivatePostgres } from '../faults/servers.ts';

const run = promisify(execFile);
const PG_BIN = '/usr/lib/postgresql/15/bin';

let source: PrivatePostgres;
let target: PrivatePostgres;
let a: Database;
let b: Database | undefined;

beforeAll(async () => {
  if (!canStartPrivatePostgres) return;
  [source, target] = await Promise.all([startPrivatePostgres(), startPrivatePostgres({ migrate: false })]);
  a = await openDatabase({ url: source.url, poolSize: 2 });
}, 180_000);
afterAll(async () => {
  await a?.close();
  await b?.close();
});

/** Takes `n` transaction ids on the source (subtransactions that write), so that its ids pass the target's. */
async function burnTransactionIds(db: Database, n: number): Promise<void> {
  await db.query(
    `do $$ begin create temp table burn (i int); for i in 1..${n} loop begin insert into burn values (i); exception when others then null; end; end loop; end $$`,
  );
}

describe.skipIf(!canStartPrivatePostgres)('the change feed across pg_dump | pg_restore into another cluster', () => {
  it('serves the whole restored history in its order, then every change written after it; positions from before stay valid', async () => {
    await burnTransactionIds(a, 5_000);
    await writeChanges(a, 5, 20);
    const history = await allPositions(a);
    expect(history).toHaveLength(100);
    const middle = history[49]!;

    await run('/bin/sh', ['-c', `runuser -u postgres -- psql -qd '${target.url.replace('/refsync', '/postgres')}' -c 'create role refdata_reader nologin'`]);
    await run('/bin/sh', ['-c', `${PG_BIN}/pg_dump -Fc -d '${source.url}' | ${PG_BIN}/pg_restore --exit-on-error -d '${target.url}'`]);
    // The old cluster goes on after the dump: a position the restored database never had.
    await writeChanges(a, 1, 3);
    const beyond = (await allPositions(a)).at(-1)!;

    b = await openDatabase({ url: target.url, poolSize: 2 });
    // Before refsync has recorded the restore, the feed refuses to serve: never "no changes after P".
    await expect(readChangeFeed(b, middle, 10)).rejects.toThrow(FeedRestoredError);
    await expect(readChangeFeed(b, middle, 10)).rejects.toThrow(
      /^the change feed's database was restored \(into another cluster: system identifier \d+, was \d+\), and refsync has not recorded it yet: run `refsync migrate`/,
    );

    const migrate = await runCli(['migrate'], { DATABASE_URL: target.url });
    expect(migrate.code, migrate.stderr).toBe(0);
    const { rows: epochs } = await b.query<{ epoch: number; previous_end: string | null; reason: string }>(
      'select epoch, previous_end, reason from refdata.change_feed_epochs order by epoch',
    );
    expect(epochs).toHaveLength(2);
    expect(epochs[1]).toMatchObject({ epoch: 1, previous_end: history.at(-1) });
    expect(epochs[1]!.reason).toMatch(/^into another cluster \(system identifier \d+, was \d+\)$/);

    expect(await allPositions(b)).toEqual(history);
    await writeChanges(b, 2, 5);
    const restoredThenNew = await allPositions(b);
    expect(restoredThenNew.slice(0, 100)).toEqual(history);
    expect(restoredThenNew).toHaveLength(110);
    for (const position of restoredThenNew.slice(100)) expect(position).toMatch(/^E0000000001-\d{20}-\d{20}$/);
    expect([...restoredThenNew].sort()).toEqual(restoredThenNew);

    // A consumer at a position from before the restore gets every later change, old and new.
    const rest: string[] = [];
    for (let after = middle; ; ) {
      const rows = await readChangeFeed(b, after, 7);
      if (rows.length === 0) break;
      rest.push(...rows.map((r) => r.position));
      after = rows.at(-1)!.position;
    }
    expect(rest).toEqual(restoredThenNew.slice(50));

    // A position of the old cluster past what was restored: refused in one line naming the restore.
    const refused = await readChangeFeed(b, beyond, 10).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(FeedPositionError);
    expect((refused as Error).message).toMatch(
      new RegExp(
        `^change feed position '${beyond}' is from a history this database no longer has: it was restored into another cluster \\(system identifier \\d+, was \\d+\\), recorded \\S+ \\S+ as feed epoch 1, and its history before then ends at ${history.at(-1)}; [^\\n]*$`,
      ),
    );
    // Nothing holds the feed on the new cluster, and it says so.
    const { rows: held } = await b.query<{ held_seconds: number }>('select held_seconds from refdata.change_feed_held()');
    expect(held[0]!.held_seconds).toBe(0);
  }, 240_000);
});
