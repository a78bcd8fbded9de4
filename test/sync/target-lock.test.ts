// The target's lock and the state read under it, as one call (refdata.lock_target_state): the read
// must see what the holder it waited for committed, and the call must take the very lock that
// lockTarget and tryLockTarget take, or two writers of one target would no longer exclude each other.
import { describe, expect, it } from 'vitest';
import type { Connection } from '../../src/db/database.ts';
import { lockThenLastSnapshots, stateReadOf } from '../../src/sync/sql.ts';
import { lockTarget, tryLockTarget } from '../../src/sync/target/target-lock.ts';
import type { Target } from '../../src/catalog/catalog.ts';
import { useTestDatabase } from '../helpers/db.ts';

const t = useTestDatabase();

/** Just what the state read asks of a target: its environment (a quote in it, as the statement carries it as a literal), list key and variant. */
const ENV = "lock-env's";
const target = { source: { environment: ENV }, list: { key: 'shipment_modes' }, variant: '' } as unknown as Target;

async function insertOk(q: Connection, contentHash: string): Promise<number> {
  const { rows } = await q.query<{ id: number }>(
    `insert into refdata.snapshots (environment, list_key, variant, status, content_hash, entry_count)
     values ($2, 'shipment_modes', '', 'ok', $1, 1) returning id`,
    [contentHash, ENV],
  );
  return Number(rows[0]!.id);
}

/** Holds a connection in a transaction until `release` resolves, running `inside` first. */
function holding(inside: (conn: Connection) => Promise<void>): { entered: Promise<void>; release: () => void; done: Promise<void> } {
  let release!: () => void;
  let entered!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const enteredP = new Promise<void>((r) => (entered = r));
  const done = t.db.withConnection(async (conn) => {
    await conn.begin();
    await inside(conn);
    entered();
    await released;
    await conn.query('commit');
  });
  return { entered: enteredP, release, done };
}

/** Until a session of this database waits on an advisory lock. */
async function waitForAdvisoryWaiter(): Promise<void> {
  for (;;) {
    const { rows } = await t.db.query<{ n: number }>(
      "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and wait_event = 'advisory'",
    );
    if (rows[0]!.n > 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('refdata.lock_target_state', () => {
  it('waits for the holder of the target lock and then reads what it committed', async () => {
    const first = await t.db.withConnection(async (conn) => {
      await conn.begin();
      const id = await insertOk(conn, 'before');
      await conn.query('commit');
      return id;
    });
    let second = 0;
    const holder = holding(async (conn) => {
      await lockTarget(conn, ENV, 'shipment_modes', '');
      second = await insertOk(conn, 'while-locked');
    });
    await holder.entered;
    const read = t.db.withConnection(async (conn) => {
      await conn.begin();
      const { rows } = await conn.query(lockThenLastSnapshots(target));
      const state = stateReadOf(rows[0]!);
      await conn.query('rollback');
      return state;
    });
    // The call waits on the advisory lock (as pg_stat_activity shows) before the holder lets go.
    await waitForAdvisoryWaiter();
    holder.release();
    await holder.done;
    const state = await read;
    expect(second).toBeGreaterThan(first);
    expect(state.lastOk).toMatchObject({ id: second, contentHash: 'while-locked', status: 'ok' });
    expect(state.last?.id).toBe(second);
  });

  it('takes the lock that tryLockTarget tries: held by the call, refused to another session', async () => {
    const holder = holding(async (conn) => {
      await conn.query(lockThenLastSnapshots(target));
    });
    await holder.entered;
    const tried = await t.db.withConnection(async (conn) => {
      await conn.begin();
      const locked = await tryLockTarget(conn, ENV, 'shipment_modes', '');
      await conn.query('rollback');
      return locked;
    });
    expect(tried).toBe(false);
    holder.release();
    await holder.done;
    const afterwards = await t.db.withConnection(async (conn) => {
      await conn.begin();
      const locked = await tryLockTarget(conn, ENV, 'shipment_modes', '');
      await conn.query('rollback');
      return locked;
    });
    expect(afterwards).toBe(true);
  });

  it('keys the lock as earlier versions did, so workers of both exclude each other during an upgrade', async () => {
    const { rows } = await t.db.query<{ same: boolean }>(
      "select refdata.target_lock_key('env', 'charge_codes', '2024-06-11') = hashtextextended(concat_ws(chr(31), 'env', 'charge_codes', '2024-06-11'), 7302611) as same",
    );
    expect(rows[0]!.same).toBe(true);
  });
});
