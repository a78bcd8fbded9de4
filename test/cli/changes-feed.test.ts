// `refsync changes --after / --consumer / --follow` as a user runs it: a real process against a real
// Postgres, changes written by real syncs of the sandbox, real signals, a reader that goes away.
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { runCli, spawnCli, waitFor } from '../queue/helpers.ts';
import { addShipmentMode, allPositions, consumerPosition, feedEnv, printedPositions, syncList } from './feed-helpers.ts';

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
    expect(res.stderr).toBe(`refsync: changes: change feed position 'yesterday' is not one the feed returned (20 digits, "-", 20 digits)\n`);
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
  it('a second run resumes exactly after the first: nothing lost, nothing twice', async () => {
    const expected = await allPositions(t.db);
    const first = await runCli(['changes', '--consumer', 'etl', '--limit', '1500', '--json'], env);
    expect(first.code, first.stderr).toBe(0);
    const firstSeen = printedPositions(first.stdout);
    expect(await consumerPosition(t.db, 'etl')).toBe(firstSeen.at(-1));
    const second = await runCli(['changes', '--consumer', 'etl', '--json'], env, 120_000);
    expect([...firstSeen, ...printedPositions(second.stdout)]).toEqual(expected);
    expect(await consumerPosition(t.db, 'etl')).toBe(expected.at(-1));
    const third = await runCli(['changes', '--consumer', 'etl', '--json'], env);
    expect(third).toMatchObject({ code: 0, stdout: '' });
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
      const consume = await runCli(['changes', '--consumer', 'analyst', '--json'], readerEnv);
      expect(consume).toMatchObject({ code: 2, stdout: '' });
      expect(consume.stderr).toMatch(
        new RegExp(`^refsync: changes: --consumer stores positions in refdata.change_feed_consumers, and the role ${login} may only read it;[^\n]*\n$`),
      );
    } finally {
      await t.db.query(`drop owned by ${login}`);
      await t.db.query(`drop role if exists ${login}`);
    }
  });

  it('moves past the changes its filters leave out, so that they are not read again', async () => {
    const expected = await allPositions(t.db);
    const res = await runCli(['changes', '--consumer', 'modes-only', '--list', 'shipment_modes', '--json'], env, 120_000);
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
