// Shared by the tests of `refsync changes --after/--follow/--consumer`: changes written by real
// syncs (`refsync sync` as a subprocess against the sandbox), and the feed as SQL sees it.
import { expect } from 'vitest';
import type { Database, Queryable } from '../../src/db/database.ts';
import { readChangeFeed } from '../../src/read/change-feed.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { runCli, type CliProcess } from '../queue/helpers.ts';
import { sandboxEnv } from '../helpers/source.ts';

/** The environment of a user whose refsync syncs this sandbox into `databaseUrl`. */
export function feedEnv(sb: Sandbox, databaseUrl: string): Record<string, string> {
  return { ...sandboxEnv(sb), DATABASE_URL: databaseUrl };
}

/** `refsync sync --list KEY` to the end; fails the test unless it succeeded. */
export async function syncList(env: Record<string, string>, list: string): Promise<void> {
  const res = await runCli(['sync', '--list', list], env, 120_000);
  expect(res.code, res.stderr).toBe(0);
}

let added = 0;

/** One new shipment mode upstream: the next sync of shipment_modes records one change. */
export function addShipmentMode(sb: Sandbox): void {
  added++;
  sb.control.addEntry('shipment_modes', { id: 900_000 + added, code: `FEED${added}`, description: `added for the feed ${added}` });
}

/** Every position the feed serves now, in order (read as a downstream job would, in pages). */
export async function allPositions(q: Queryable): Promise<string[]> {
  const positions: string[] = [];
  for (let after: string | null = null; ; ) {
    const rows = await readChangeFeed(q, after, 10_000);
    if (rows.length === 0) return positions;
    positions.push(...rows.map((r) => r.position));
    after = rows.at(-1)!.position;
  }
}

/** The positions of the JSON Lines a `changes --json` run printed. */
export function printedPositions(stdout: string): string[] {
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { position: string }).position);
}

/** The consumer's stored position, as the table holds it. */
export async function consumerPosition(q: Queryable, name: string): Promise<string | undefined> {
  const { rows } = await q.query<{ position: string }>('select position from refdata.change_feed_consumers where name = $1', [name]);
  return rows[0]?.position;
}

/** Sends `signal` and resolves with the exit code (SIGKILL after 30 s, which fails the test's expectation). */
export async function stopWith(proc: CliProcess, signal: NodeJS.Signals): Promise<number | null> {
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), 30_000);
  proc.child.kill(signal);
  const code = await proc.exited;
  clearTimeout(timer);
  return code;
}

/** `transactions` write transactions of `rows` changes each, as syncs would write them (without a sync). */
export async function writeChanges(db: Database, transactions: number, rows: number): Promise<void> {
  const { rows: runs } = await db.query<{ id: string }>("insert into refdata.sync_runs (environment, trigger) values ('feed', 'cli') returning id");
  for (let i = 0; i < transactions; i++) {
    await db.transaction(async (tx) => {
      const { rows: snap } = await tx.query<{ id: string }>(
        "insert into refdata.snapshots (run_id, environment, list_key, variant, fetched_at, status) values ($1, 'feed', 'shipment_modes', '', now(), 'ok') returning id",
        [runs[0]!.id],
      );
      await tx.query(
        `insert into refdata.entry_changes (snapshot_id, environment, list_key, entry_key, change)
         select $1, 'feed', 'shipment_modes', 'k' || g, 'added' from generate_series(1, $2::int) g`,
        [snap[0]!.id, rows],
      );
    });
  }
}
