// The change feed after a point-in-time restore: a base backup and a WAL archive of a private server,
// restored to a named restore point onto a new timeline by a second server. The changes after the
// restore point are gone, and a job whose position came from them must not be told "nothing new"
// (the restored server hands out those transaction ids again): its position is refused in one line
// that names the restore and where this database's history ends; a position from before the restore
// point reads on, through every change written after the restore.
import { execFile } from 'node:child_process';
import { appendFileSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.ts';
import { FeedPositionError, FeedRestoredError, readChangeFeed } from '../../src/read/change-feed.ts';
import { allPositions, writeChanges } from '../cli/feed-helpers.ts';
import { freePort, runCli, waitFor } from '../queue/helpers.ts';
import { canStartPrivatePostgres, gidOf, startPrivatePostgres, uidOf } from '../faults/servers.ts';

const run = promisify(execFile);
const PG_BIN = '/usr/lib/postgresql/15/bin';
const asPostgres = (cmd: string, args: string[]) => run('runuser', ['-u', 'postgres', '--', cmd, ...args], { timeout: 60_000 });

const dir = canStartPrivatePostgres ? mkdtempSync(join(tmpdir(), 'refsync-pitr-')) : '';
const opened: Database[] = [];
let restoredData: string | undefined;
afterAll(async () => {
  for (const db of opened) await db.close();
  if (restoredData) await asPostgres(`${PG_BIN}/pg_ctl`, ['-D', restoredData, '-m', 'immediate', 'stop']).catch(() => undefined);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!canStartPrivatePostgres)('the change feed after a point-in-time restore', () => {
  it('refuses a position from the discarded timeline naming the restore; one from before reads on', async () => {
    chownSync(dir, uidOf('postgres'), gidOf('postgres'));
    const archive = join(dir, 'archive');
    mkdirSync(archive);
    chownSync(archive, uidOf('postgres'), gidOf('postgres'));
    const source = await startPrivatePostgres({ settings: { archive_mode: 'on', archive_command: `'cp %p ${archive}/%f'` } });
    const a = await openDatabase({ url: source.url, poolSize: 2 });
    opened.push(a);
    await writeChanges(a, 2, 10);
    const backup = join(dir, 'backup');
    await asPostgres(`${PG_BIN}/pg_basebackup`, ['-D', backup, '-h', '127.0.0.1', '-p', String(source.port), '-U', 'postgres', '-X', 'stream', '-c', 'fast']);
    await writeChanges(a, 2, 10);
    const kept = await allPositions(a);
    expect(kept).toHaveLength(40);
    await a.query("select pg_create_restore_point('before-the-mistake')");
    // The changes the restore discards, and a job that read them.
    await writeChanges(a, 2, 10);
    const lost = (await allPositions(a)).at(-1)!;
    const { rows: archived } = await a.query<{ n: number }>('select archived_count as n from pg_stat_archiver');
    await a.query('select pg_switch_wal()');
    await waitFor(
      async () => (await a.query<{ n: number }>('select archived_count as n from pg_stat_archiver')).rows[0]!.n > archived[0]!.n,
      'the WAL to be archived',
      60_000,
    );

    // The restore: the base backup, replayed from the archive to the restore point, promoted.
    restoredData = backup;
    writeFileSync(join(backup, 'recovery.signal'), '');
    appendFileSync(
      join(backup, 'postgresql.auto.conf'),
      `\nrestore_command = 'cp ${archive}/%f %p'\nrecovery_target_name = 'before-the-mistake'\nrecovery_target_action = 'promote'\narchive_mode = off\n`,
    );
    chownSync(join(backup, 'recovery.signal'), uidOf('postgres'), gidOf('postgres'));
    const port = await freePort();
    await asPostgres(`${PG_BIN}/pg_ctl`, [
      '-D',
      backup,
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`,
      '-l',
      join(dir, 'restored.log'),
      '-w',
      '-t',
      '60',
      'start',
    ]);
    const url = `postgres://postgres@127.0.0.1:${port}/refsync`;
    const b = await openDatabase({ url, poolSize: 2 });
    opened.push(b);
    await waitFor(async () => !(await b.query<{ r: boolean }>('select pg_is_in_recovery() as r')).rows[0]!.r, 'the restored server to be promoted', 60_000);

    // Not yet recorded by refsync: the feed refuses rather than answer "nothing new".
    await expect(readChangeFeed(b, kept.at(-1)!, 10)).rejects.toThrow(FeedRestoredError);
    await expect(readChangeFeed(b, kept.at(-1)!, 10)).rejects.toThrow(/restored \(onto timeline 2, was 1: a point-in-time restore or a promotion\)/);
    const migrate = await runCli(['migrate'], { DATABASE_URL: url });
    expect(migrate.code, migrate.stderr).toBe(0);

    expect(await allPositions(b)).toEqual(kept);
    const refused = await readChangeFeed(b, lost, 10).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(FeedPositionError);
    expect((refused as Error).message).toMatch(
      new RegExp(
        `^change feed position '${lost}' is from a history this database no longer has: it was restored onto timeline 2 \\(was 1\\): a point-in-time restore or a promotion, recorded \\S+ \\S+ as feed epoch 1, and its history before then ends at ${kept.at(-1)}; the changes read past that are not in this database\\. Resume after ${kept.at(-1)} `,
      ),
    );
    // At the command line: one line, exit 2.
    const cli = await runCli(['changes', '--after', lost], { DATABASE_URL: url });
    expect(cli.code).toBe(2);
    expect(cli.stderr.split('\n')).toHaveLength(2);

    // Changes written after the restore reuse the discarded timeline's transaction ids; a job at the
    // last kept position still reads every one of them.
    await writeChanges(b, 2, 5);
    const after = (await readChangeFeed(b, kept.at(-1)!, 100)).map((r) => r.position);
    expect(after).toHaveLength(10);
    for (const position of after) expect(position > lost).toBe(true);
  }, 240_000);
});
