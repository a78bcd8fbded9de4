// `refsync changes --after / --consumer / --follow` as a user runs it: a real process against a real
// Postgres, changes written by real syncs of the sandbox, real signals, a reader that goes away.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { runCli, spawnCli, waitFor } from '../queue/helpers.ts';
import { addShipmentMode, allPositions, consumerPosition, feedEnv, printedPositions, stopWith, syncList } from './feed-helpers.ts';

const t = useTestDatabase();
let sb: Sandbox;
let env: Record<string, string>;
const START = '00000000000000000000-00000000000000000000';

beforeAll(async () => {
  // 2,500 generated entries, then every one of them revised: 2,500 changes, more than two pages.
  sb = await useSandbox();
  sb.control.setGenerated('nmfc_codes', 2_500);
  env = feedEnv(sb, t.url);
  await syncList(env, 'nmfc_codes,shipment_modes');
  sb.control.changeGenerated('nmfc_codes', { everyNth: 1 });
  addShipmentMode(sb);
  await syncList(env, 'nmfc_codes,shipment_modes');
  // Served once no older write transaction is open on the shared server (other files' included).
  await waitFor(async () => (await allPositions(t.db)).length === 2_501, 'the feed to serve the 2,501 changes', 180_000, 500);
}, 420_000);

describe('refsync changes --after', () => {
  it('pages through every change exactly once, in feed order, as JSON Lines', async () => {
    const expected = await allPositions(t.db);
    expect(expected.length).toBe(2_501);
    const res = await runCli(['changes', '--after', START, '--json'], env, 120_000);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toBe('');
    expect(printedPositions(res.stdout)).toEqual(expected);
  });

  it('--limit bounds what is printed; resuming after the last printed position reads the rest, none twice', async () => {
    const expected = await allPositions(t.db);
    const first = await runCli(['changes', '--after', START, '--limit', '1200', '--json'], env);
    const seen = printedPositions(first.stdout);
    expect(seen.length).toBe(1_200);
    const rest = await runCli(['changes', '--after', seen.at(-1)!, '--json'], env, 120_000);
    expect([...seen, ...printedPositions(rest.stdout)]).toEqual(expected);
  });

  it('prints one readable line per change, its position first; filters choose what is printed', async () => {
    const res = await runCli(['changes', '--after', START, '--list', 'shipment_modes'], env);
    expect(res.code, res.stderr).toBe(0);
    const lines = res.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\d{20}-\d{20} {2}\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ {2}sandbox {2}shipment_modes {2}added {2}FEED1 {2}added for the feed 1$/);
  });

  it('a malformed position is one line on stderr and exit 2', async () => {
    const res = await runCli(['changes', '--after', 'yesterday'], env);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/^refsync: changes: change feed position 'yesterday' is not one the feed returned \(20 digits, "-", 20 digits[^\n]*\)\n$/);
  });

  it('a position the feed could not have returned is refused in one line: past its end, past a transaction id, past an id', async () => {
    const end = (await allPositions(t.db)).at(-1)!;
    const [txid, id] = end.split('-') as [string, string];
    const cases: Array<[string, RegExp]> = [
      [`${txid}-${String(Number(id) + 1).padStart(20, '0')}`, /is past the feed's end \(\d{20}-\d{20}\): not one this database's feed returned$/],
      ['99999999999999999999-00000000000000000001', /its transaction id 99999999999999999999 is past the range of a transaction id \(2\^64 - 1\)$/],
      ['00000000000000000001-99999999999999999999', /its id 99999999999999999999 is past the range of an id \(bigint, 2\^63 - 1\)$/],
      ['E0000000007-00000000000000000001-00000000000000000001', /is ahead of the feed: its epoch 7 has not begun in this database \(the current one is 0\)$/],
    ];
    for (const [position, message] of cases) {
      const res = await runCli(['changes', '--after', position], env);
      expect(res.code, position).toBe(2);
      expect(res.stdout).toBe('');
      expect(res.stderr.split('\n')).toHaveLength(2);
      expect(res.stderr.trimEnd()).toMatch(message);
    }
    // Caught up reads the same as ever: nothing, exit 0, where it ended.
    const caughtUp = await runCli(['changes', '--after', end], env);
    expect(caughtUp).toMatchObject({ code: 0, stdout: '', stderr: `refsync: changes: no changes after ${end}\n` });
  });

  it('a reader that goes away (| head -1) ends it quietly: exit 0, no stack trace', async () => {
    const proc = spawnCli(['changes', '--after', START], env);
    await waitFor(() => proc.output().stdout.includes('\n'), 'the first line');
    proc.child.stdout!.destroy();
    expect(await proc.exited).toBe(0);
    expect(proc.output().stderr).toBe('');
  });
});

describe('refsync changes --consumer', () => {
  it('reading stores nothing; --commit moves the position, and the next run resumes exactly after it', async () => {
    const expected = await allPositions(t.db);
    const first = await runCli(['changes', '--consumer', 'etl', '--from-start', '--limit', '1500', '--json'], env);
    expect(first.code, first.stderr).toBe(0);
    const firstSeen = printedPositions(first.stdout);
    expect(firstSeen).toEqual(expected.slice(0, 1500));
    expect(await consumerPosition(t.db, 'etl')).toBe(START);
    const commit = await runCli(['changes', '--consumer', 'etl', '--commit', firstSeen.at(-1)!], env);
    expect(commit).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(await consumerPosition(t.db, 'etl')).toBe(firstSeen.at(-1));
    const second = await runCli(['changes', '--consumer', 'etl', '--json'], env, 120_000);
    expect([...firstSeen, ...printedPositions(second.stdout)]).toEqual(expected);
    await runCli(['changes', '--consumer', 'etl', '--commit', expected.at(-1)!], env);
    const third = await runCli(['changes', '--consumer', 'etl', '--json'], env);
    expect(third).toMatchObject({ code: 0, stdout: '' });
  });

  it('a position never moves back, nor past the feed: --commit refuses both in one line', async () => {
    const expected = await allPositions(t.db);
    expect((await runCli(['changes', '--consumer', 'forward', '--commit', expected[10]!], env)).code).toBe(0);
    const back = await runCli(['changes', '--consumer', 'forward', '--commit', expected[5]!], env);
    expect(back.code).toBe(2);
    expect(back.stderr).toBe(
      `refsync: changes: consumer 'forward' has committed ${expected[10]}, past ${expected[5]}: a consumer's position never moves back (read again under another name to replay)\n`,
    );
    const ahead = await runCli(['changes', '--consumer', 'forward', '--commit', '99999999999999999999-00000000000000000001'], env);
    expect(ahead.code).toBe(2);
    expect(ahead.stderr).toMatch(/^refsync: changes: change feed position '99999999999999999999-00000000000000000001' is not one the feed returned[^\n]*\n$/);
    // The same position again is a no-op (a batch committed twice).
    expect((await runCli(['changes', '--consumer', 'forward', '--commit', expected[10]!], env)).code).toBe(0);
    expect(await consumerPosition(t.db, 'forward')).toBe(expected[10]);
  });

  it('a name never seen before needs --after or --from-start: refused in one line, nothing printed', async () => {
    const res = await runCli(['changes', '--consumer', 'warehuose', '--json'], env);
    expect(res).toMatchObject({ code: 2, stdout: '' });
    expect(res.stderr).toMatch(/^refsync: changes: consumer 'warehuose' is new: give --after POSITION [^\n]* or --from-start [^\n]*\n$/);
    expect(await consumerPosition(t.db, 'warehuose')).toBeUndefined();
  });

  it('| head: a reader that goes away never moves the position past lines it did not read', async () => {
    const proc = spawnCli(['changes', '--consumer', 'head', '--from-start', '--json'], env);
    await waitFor(() => proc.output().stdout.includes('\n'), 'the first line');
    proc.child.stdout!.destroy();
    expect(await proc.exited).toBe(0);
    expect(await consumerPosition(t.db, 'head')).toBe(START);
  });

  it('one process at a time per name: a second is refused in one line while the first reads, and may read once it has ended', async () => {
    const first = spawnCli(['changes', '--consumer', 'single', '--from-start', '--follow', '--json'], env);
    await waitFor(() => printedPositions(first.output().stdout).length === 2_501, 'the first reader to catch up', 120_000);
    const second = await runCli(['changes', '--consumer', 'single', '--json'], env);
    expect(second).toMatchObject({ code: 2, stdout: '' });
    expect(second.stderr).toMatch(
      /^refsync: changes: consumer 'single' is being read by \S+ pid \d+, its lease runs until [^\n]*: one process at a time per name; [^\n]*\n$/,
    );
    expect(await stopWith(first, 'SIGTERM')).toBe(0);
    const after = await runCli(['changes', '--consumer', 'single', '--json', '--limit', '1'], env);
    expect(after.code, after.stderr).toBe(0);
    expect(printedPositions(after.stdout)).toHaveLength(1);
  });

  it('--exec commits each batch its command exits 0 on, and nothing of the batch it fails', async () => {
    const expected = await allPositions(t.db);
    const dir = mkdtempSync(join(tmpdir(), 'refsync-exec-'));
    try {
      // The loader keeps every batch; the third run of it fails.
      const loader = `n=$(ls ${dir} | wc -l); cat > ${dir}/batch-$n; [ "$n" -lt 2 ]`;
      const res = await runCli(['changes', '--consumer', 'batches', '--from-start', '--json', '--batch', '1000', '--exec', loader], env, 120_000);
      expect(res.code).toBe(1);
      expect(res.stderr).toBe(
        `refsync: changes: --exec command exited with status 1 on its batch of 501 change(s) after ${expected[1999]}; nothing committed past ${expected[1999]}\n`,
      );
      expect(await consumerPosition(t.db, 'batches')).toBe(expected[1999]);
      const batch = (n: number) => printedPositions(readFileSync(join(dir, `batch-${n}`), 'utf8'));
      expect([...batch(0), ...batch(1), ...batch(2)]).toEqual(expected);
      // Run again, the loader now succeeding: the failed batch comes again, and only it.
      const again = await runCli(['changes', '--consumer', 'batches', '--json', '--exec', `cat > ${dir}/again`], env, 120_000);
      expect(again.code, again.stderr).toBe(0);
      expect(printedPositions(readFileSync(join(dir, 'again'), 'utf8'))).toEqual(expected.slice(2000));
      expect(await consumerPosition(t.db, 'batches')).toBe(expected.at(-1));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--exec: SIGKILL of refsync or of its loader at any moment loses nothing, and repeats at most the batch in flight', async () => {
    const expected = await allPositions(t.db);
    const dir = mkdtempSync(join(tmpdir(), 'refsync-exec-kill-'));
    const out = join(dir, 'loaded');
    const killLoader = join(dir, 'kill-loader');
    // The loader appends its batch, then (when told to) is killed before it can exit 0.
    const loader = `cat >> ${out}; sleep 0.1; if [ -e ${killLoader} ]; then rm ${killLoader}; kill -9 $$; fi`;
    const args = ['changes', '--consumer', 'killed', '--json', '--batch', '50', '--exec', loader];
    const loaded = () => (existsSync(out) ? readFileSync(out, 'utf8').split('\n').filter(Boolean).length : 0);
    try {
      expect((await runCli(['changes', '--consumer', 'killed', '--commit', START], env)).code).toBe(0);
      let kills = 0;
      for (let round = 0; round < 6; round++) {
        // A slow machine may have let a run read everything before its kill: nothing is left to kill.
        if ((await consumerPosition(t.db, 'killed')) === expected.at(-1)) break;
        if (round % 2 === 1) {
          writeFileSync(killLoader, '');
          const res = await runCli(args, env, 120_000);
          expect(res.code, `${res.stderr} / loaded ${loaded()}`).toBe(1);
          expect(res.stderr).toMatch(
            /^refsync: changes: --exec command was ended by SIGKILL on its batch of \d+ change\(s\) after [^\n]*; nothing committed past [^\n]*\n$/,
          );
        } else {
          const before = loaded();
          const proc = spawnCli(args, env);
          await waitFor(() => loaded() > before, 'a batch to be loading', 60_000, 5);
          await new Promise((resolve) => setTimeout(resolve, (round * 37) % 150));
          proc.child.kill('SIGKILL');
          await proc.exited;
          // Its loader, orphaned, finishes its batch meanwhile (what a killed pipeline's loader does):
          // let it end before the next round tells a loader to die.
          await new Promise((resolve) => setTimeout(resolve, 500));
          // Its lease would lapse in 30 s; the test does not wait for it.
          await t.db.query("update refdata.change_feed_consumers set lease_until = now() where name = 'killed'");
        }
        kills++;
      }
      const last = await runCli(args, env, 120_000);
      expect(last.code, last.stderr).toBe(0);
      const positions = readFileSync(out, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => (JSON.parse(line) as { position: string }).position);
      expect([...new Set(positions)].sort()).toEqual(expected);
      expect(kills).toBeGreaterThanOrEqual(2);
      expect(positions.length - expected.length).toBeLessThanOrEqual(kills * 50);
      expect(await consumerPosition(t.db, 'killed')).toBe(expected.at(-1));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('SIGTERM and SIGINT exit 0 whenever they come, even while it starts, having committed nothing', async () => {
    // Counted from its first connection to Postgres (still loading, or taking its lease, or reading):
    // the moments before Node runs bin/refsync.js's first lines are the operating system's default.
    const sessions = async () => {
      const { rows } = await t.db.query<{ n: number }>(
        "select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = 'refsync-cli'",
      );
      return rows[0]!.n;
    };
    for (const [i, delay] of [0, 20, 100, 300, 800].entries()) {
      const signal = i % 2 ? 'SIGINT' : 'SIGTERM';
      const name = `signal-${i}`;
      const proc = spawnCli(['changes', '--consumer', name, '--from-start', '--follow', '--json'], env);
      await waitFor(async () => (await sessions()) > 0, 'refsync to connect', 60_000, 5);
      await new Promise((resolve) => setTimeout(resolve, delay));
      expect(await stopWith(proc, signal), `${signal} after ${delay} ms: ${proc.output().stderr}`).toBe(0);
      expect([undefined, START]).toContain(await consumerPosition(t.db, name));
    }
  });

  it('a read-only role (refdata_reader) reads the feed, and is refused --consumer before anything is printed', async () => {
    // Roles are cluster-wide: a name of this run's own, dropped at the end.
    const login = `refsync_feed_reader_${randomBytes(4).toString('hex')}`;
    await t.db.query(`create role ${login} login in role refdata_reader`);
    // Every refsync command reads the schema version first (drizzle's bookkeeping), which
    // refdata_reader alone may not: granted here as an administrator would for such a login.
    await t.db.query(`grant usage on schema drizzle to ${login}; grant select on drizzle.__drizzle_migrations to ${login}`);
    try {
      const url = new URL(t.url);
      url.username = login;
      const readerEnv = { ...env, DATABASE_URL: url.toString() };
      const read = await runCli(['changes', '--after', START, '--limit', '3', '--json'], readerEnv);
      expect(read.code, read.stderr).toBe(0);
      expect(printedPositions(read.stdout)).toHaveLength(3);
      const consume = await runCli(['changes', '--consumer', 'analyst', '--from-start', '--json'], readerEnv);
      expect(consume).toMatchObject({ code: 2, stdout: '' });
      expect(consume.stderr).toMatch(
        new RegExp(`^refsync: changes: --consumer stores positions in refdata.change_feed_consumers, and the role ${login} may only read it;[^\n]*\n$`),
      );
    } finally {
      await t.db.query(`drop owned by ${login}`);
      await t.db.query(`drop role if exists ${login}`);
    }
  });

  it('--exec moves past the changes its filters leave out, so that they are not read again', async () => {
    const expected = await allPositions(t.db);
    const res = await runCli(['changes', '--consumer', 'modes-only', '--from-start', '--list', 'shipment_modes', '--json', '--exec', 'cat'], env, 120_000);
    expect(res.code, res.stderr).toBe(0);
    expect(printedPositions(res.stdout)).toHaveLength(1);
    expect(await consumerPosition(t.db, 'modes-only')).toBe(expected.at(-1));
  });
});

describe('refsync changes --follow', () => {
  // Following live commits and a Postgres restart: test/faults/changes-follow.test.ts, on a private
  // server (the shared one's fence moves with every other test file's open transactions).
  it('refuses the embedded database in one line (no other process can write to it meanwhile)', async () => {
    const res = await runCli(['changes', '--follow'], { ...env, DATABASE_URL: '' });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^refsync: changes: --follow needs a Postgres server \(DATABASE_URL\)[^\n]*\n$/);
  });
});
