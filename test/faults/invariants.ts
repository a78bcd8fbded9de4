// The "nothing lost" invariants, checked after every fault case against the real tables:
//
//  1. each list's current rows are exactly one whole state the sandbox served (the previous one or
//     the new one), never a mix;
//  2. per key, at most one row with valid_to null, and a history with no overlap and no gap that
//     is not a recorded removal followed by a reappearance;
//  3. change rows exactly once (per snapshot and key; counts equal the snapshot's counts), and one
//     alert per (snapshot, kind) — never a duplicate, never a kind the snapshot's changes do not
//     call for, never a missing one;
//  4. every run record terminal (no run left `running`), one per (source, slot).
import { expect } from 'vitest';
import { targetsFor, type Target } from '../../src/catalog/catalog.ts';
import type { SourceConfig } from '../../src/config/types.ts';
import type { AlertKind } from '../../src/config/types.ts';
import type { Database } from '../../src/db/database.ts';
import { wantsAlert } from '../../src/alerts/outbox.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { canonicalJson, normalizeEntry } from '../../src/sync/collect/collect.ts';

/** One whole state of one list variant: entry key → canonical payload. */
export type ListState = Map<string, string>;
/** The states of every target of a source, by `list_key/variant`. */
export type SourceState = Map<string, ListState>;

export function targetLabel(t: Pick<Target, 'variant'> & { list: { key: string } }): string {
  return `${t.list.key}/${t.variant}`;
}

function selector(target: Target): { version?: string; carrier?: string } {
  if (target.list.variants === 'carrier') return { carrier: target.variant };
  if (target.list.variants === 'charge_code_version' && target.variant !== 'unpinned') return { version: target.variant };
  return {};
}

/** What the sandbox serves now for one target, as the pipeline would store it. */
export function servedList(sb: Sandbox, target: Target): ListState {
  const state: ListState = new Map();
  sb.control.getEntries(target.list.key, selector(target)).forEach((raw, i) => {
    const n = normalizeEntry(target.list, raw, i);
    state.set(n.entryKey, canonicalJson(JSON.parse(n.payload)));
  });
  return state;
}

/** What the sandbox serves now for every target of the source. */
export function servedState(sb: Sandbox, source: SourceConfig): SourceState {
  return new Map(targetsFor(source).map((t) => [targetLabel(t), servedList(sb, t)]));
}

/** The current rows of one target. Duplicate open rows fail here already. */
export async function currentList(db: Database, target: Target): Promise<ListState> {
  const { rows } = await db.query<{ entry_key: string; payload: unknown }>(
    `select entry_key, payload from refdata.entries
     where environment = $1 and list_key = $2 and variant = $3 and valid_to is null`,
    [target.source.environment, target.list.key, target.variant],
  );
  const state: ListState = new Map();
  for (const r of rows) {
    expect(state.has(r.entry_key), `${targetLabel(target)}: two open rows for key ${r.entry_key}`).toBe(false);
    state.set(r.entry_key, canonicalJson(r.payload));
  }
  return state;
}

function sameState(a: ListState, b: ListState): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}

function describeDiff(actual: ListState, expected: ListState): string {
  const missing = [...expected.keys()].filter((k) => !actual.has(k));
  const extra = [...actual.keys()].filter((k) => !expected.has(k));
  const differ = [...expected.keys()].filter((k) => actual.has(k) && actual.get(k) !== expected.get(k));
  return `missing ${missing.slice(0, 5).join(',')} (${missing.length}), extra ${extra.slice(0, 5).join(',')} (${extra.length}), differing ${differ.slice(0, 5).join(',')} (${differ.length})`;
}

/**
 * Every target's current rows equal one of the given whole states (for instance the state served
 * before the fault and the one served after). Returns, per target, the index of the state matched.
 */
export async function expectWholeStates(db: Database, source: SourceConfig, states: SourceState[]): Promise<Map<string, number>> {
  const matched = new Map<string, number>();
  for (const target of targetsFor(source)) {
    const label = targetLabel(target);
    const current = await currentList(db, target);
    const candidates = states.map((s) => s.get(label)).filter((s): s is ListState => s !== undefined);
    const index = candidates.findIndex((s) => sameState(current, s));
    expect(
      index,
      `${label}: current rows are not one whole served state: ${candidates.map((c) => describeDiff(current, c)).join(' | ')}`,
    ).toBeGreaterThanOrEqual(0);
    matched.set(label, index);
  }
  return matched;
}

/** One target's current rows equal exactly this state (the list was left untouched, or fully applied). */
export async function expectListState(db: Database, target: Target, state: ListState): Promise<void> {
  const current = await currentList(db, target);
  expect(sameState(current, state), `${targetLabel(target)}: ${describeDiff(current, state)}`).toBe(true);
}

/** History, change rows, alerts and run records of one environment (invariants 2 to 4). */
export async function expectConsistentHistory(db: Database, source: SourceConfig): Promise<void> {
  const env = source.environment;

  // 2. At most one open row per key; intervals ordered, non-empty, not overlapping; a gap only
  //    where the key was removed and reappeared later (a 'reappeared' change at the reopening).
  const open = await db.query<{ list_key: string; variant: string; entry_key: string; n: number }>(
    `select list_key, variant, entry_key, count(*)::int as n from refdata.entries
     where environment = $1 and valid_to is null group by 1, 2, 3 having count(*) > 1`,
    [env],
  );
  expect(open.rows, 'keys with more than one open row').toEqual([]);
  const history = await db.query<{ list_key: string; variant: string; entry_key: string; problem: string }>(
    `with h as (
       select list_key, variant, entry_key, valid_from, valid_to,
              lead(valid_from) over w as next_from
       from refdata.entries where environment = $1
       window w as (partition by list_key, variant, entry_key order by valid_from, id))
     select list_key, variant, entry_key,
            case when valid_to is not null and valid_to <= valid_from then 'empty or reversed interval'
                 when valid_to is null and next_from is not null then 'open row before a later row'
                 when next_from is not null and valid_to > next_from then 'overlap'
                 else 'gap without a reappearance' end as problem
     from h
     where (valid_to is not null and valid_to <= valid_from)
        or (valid_to is null and next_from is not null)
        or (next_from is not null and valid_to > next_from)
        or (next_from is not null and valid_to < next_from and not exists (
              select 1 from refdata.entry_changes c
              where c.environment = $1 and c.list_key = h.list_key and c.variant = h.variant
                and c.entry_key = h.entry_key and c.change = 'reappeared' and c.detected_at = h.next_from))`,
    [env],
  );
  expect(history.rows, 'history intervals').toEqual([]);

  // 3a. Change rows exactly once, and as many as the snapshot says.
  const dupChanges = await db.query(
    `select snapshot_id, entry_key, count(*)::int as n from refdata.entry_changes
     where environment = $1 group by 1, 2 having count(*) > 1`,
    [env],
  );
  expect(dupChanges.rows, 'duplicate change rows').toEqual([]);
  const counts = await db.query<{ id: number; problem: string }>(
    `select s.id, format('snapshot says %s/%s/%s/%s/%s, rows say %s/%s/%s/%s/%s', s.added, s.removed, s.modified, s.reappeared, s.reshaped,
              coalesce(c.added, 0), coalesce(c.removed, 0), coalesce(c.modified, 0), coalesce(c.reappeared, 0), coalesce(c.reshaped, 0)) as problem
     from refdata.snapshots s
     left join (select snapshot_id,
                       count(*) filter (where change = 'added')::int as added,
                       count(*) filter (where change = 'removed')::int as removed,
                       count(*) filter (where change = 'modified')::int as modified,
                       count(*) filter (where change = 'reappeared')::int as reappeared,
                       count(*) filter (where change = 'reshaped')::int as reshaped
                from refdata.entry_changes where environment = $1 group by snapshot_id) c on c.snapshot_id = s.id
     where s.environment = $1 and s.status = 'ok' and s.changed
       and exists (select 1 from refdata.snapshots p where p.environment = s.environment and p.list_key = s.list_key
                     and p.variant = s.variant and p.status = 'ok' and p.id < s.id)
       and (coalesce(c.added, 0), coalesce(c.removed, 0), coalesce(c.modified, 0), coalesce(c.reappeared, 0), coalesce(c.reshaped, 0))
           is distinct from (s.added, s.removed, s.modified, s.reappeared, s.reshaped)`,
    [env],
  );
  expect(counts.rows, 'change rows per snapshot').toEqual([]);
  const orphanChanges = await db.query(
    `select c.id from refdata.entry_changes c join refdata.snapshots s on s.id = c.snapshot_id
     where c.environment = $1 and not (s.status = 'ok' and s.changed)`,
    [env],
  );
  expect(orphanChanges.rows, 'change rows of a snapshot that applied nothing').toEqual([]);

  // 3b. One alert per (snapshot, kind); each change kind the source alerts on has its alert.
  const dupAlerts = await db.query(
    `select snapshot_id, kind, count(*)::int as n from refdata.alerts
     where environment = $1 group by 1, 2 having count(*) > 1`,
    [env],
  );
  expect(dupAlerts.rows, 'duplicate alerts').toEqual([]);
  const changeKinds = await db.query<{ snapshot_id: number; list_key: string; change: AlertKind }>(
    'select distinct snapshot_id, list_key, change from refdata.entry_changes where environment = $1',
    [env],
  );
  const alerts = await db.query<{ snapshot_id: number; kind: string }>('select snapshot_id, kind from refdata.alerts where environment = $1', [env]);
  const alertKeys = new Set(alerts.rows.map((a) => `${a.snapshot_id}:${a.kind}`));
  const missing = changeKinds.rows
    .filter((c) => wantsAlert(source, c.change, c.list_key))
    .map((c) => `${c.snapshot_id}:${c.change}`)
    .filter((k) => !alertKeys.has(k));
  expect(missing, 'change kinds without their alert').toEqual([]);
  const changeKeys = new Set(changeKinds.rows.map((c) => `${Number(c.snapshot_id)}:${c.change}`));
  const unexplained = alerts.rows
    .filter((a) => ['added', 'removed', 'modified', 'reappeared'].includes(a.kind))
    .map((a) => `${Number(a.snapshot_id)}:${a.kind}`)
    .filter((k) => !changeKeys.has(k));
  expect(unexplained, 'change alerts without a change').toEqual([]);

  // 4. Run records: terminal, one per (source, slot).
  const running = await db.query<{ id: number; status: string }>(
    `select id, status from refdata.sync_runs where environment = $1 and (status = 'running' or finished_at is null)`,
    [env],
  );
  expect(running.rows, 'run records left running').toEqual([]);
  const dupRuns = await db.query(
    `select source, slot, count(*)::int as n from refdata.sync_runs
     where environment = $1 and slot is not null group by 1, 2 having count(*) > 1`,
    [env],
  );
  expect(dupRuns.rows, 'two run records for one slot').toEqual([]);
}

/** Row counts of one environment, to show that a re-run (or a failed run) added nothing. */
export async function footprint(db: Database, environment: string): Promise<Record<string, number>> {
  const { rows } = await db.query<Record<string, number>>(
    `select (select count(*)::int from refdata.entries where environment = $1) as entries,
            (select count(*)::int from refdata.entries where environment = $1 and valid_to is null) as open_entries,
            (select count(*)::int from refdata.entry_changes where environment = $1) as changes,
            (select count(*)::int from refdata.alerts where environment = $1) as alerts,
            (select count(*)::int from refdata.snapshots where environment = $1 and status = 'ok' and changed) as applied`,
    [environment],
  );
  return rows[0]!;
}
