import type { Target } from '../catalog/targets.ts';
import type { Connection, Queryable } from '../db/database.ts';
import { ALERT_ENTRY_CAP, wantsAlert, writeAlert } from '../alerts/outbox.ts';
import type { CollectedList } from './collect.ts';
import { rowsGeneration, StaleIndexError } from './current-index.ts';
import { notifyChange } from './notify.ts';
import { previousSnapshots } from './previous.ts';
import { unnestRows, type RowSource, type StagingTable } from './staging.ts';
import { alertFor } from './alert-row.ts';
import { recordImpact } from './impact.ts';
import { lockTarget } from './target-lock.ts';
import { evolveListColumns, type ColumnChange } from '../columns/recorded-columns.ts';

export type ChangeKind = 'added' | 'removed' | 'modified' | 'reappeared';
const changeKinds: ChangeKind[] = ['added', 'removed', 'modified', 'reappeared'];

export interface ApplyOptions {
  runId: number | null;
  /** Apply a fetch even when it would retire more than the allowed share of the list. */
  acceptRemovals: boolean;
  durationMs: () => number;
  /** Staged rows above which the staging and diff tables are ANALYZEd (tuning.analyzeAfterRows). */
  analyzeAfterRows: number;
}

export interface ApplyResult {
  status: 'unchanged' | 'changed' | 'held';
  snapshotId: number;
  counts: Record<ChangeKind, number>;
  /** The first snapshot of a target is a baseline: its rows are opened, but it records no changes or alerts. */
  baseline: boolean;
  error?: string;
  /** Why the impact on a usage column could not be computed; the snapshot was applied all the same. */
  impactError?: string;
}

const zeroCounts = (): Record<ChangeKind, number> => ({ added: 0, removed: 0, modified: 0, reappeared: 0 });

/** SQL for the next snapshot id: taken by the insert, or reserved ahead by a direct first load. */
export const nextSnapshotId = "nextval(pg_get_serial_sequence('refdata.snapshots', 'id'))";

interface SnapshotInsert {
  /** An id reserved earlier (a direct load writes its rows before the snapshot); else the next one. */
  id?: number;
  status: 'ok' | 'held';
  changed: boolean;
  counts: Record<ChangeKind, number>;
  error?: string;
}

async function insertSnapshot(
  tx: Queryable,
  target: Target,
  collected: CollectedList,
  options: ApplyOptions,
  now: Date,
  row: SnapshotInsert,
): Promise<number> {
  const { rows } = await tx.query<{ id: number }>(
    `insert into refdata.snapshots
       (id, run_id, environment, list_key, variant, fetched_at, status, content_hash, entry_count, changed,
        added, removed, modified, reappeared, error, error_code, fields, pages, duration_ms, replaced_values)
     values (coalesce($19::bigint, ${nextSnapshotId}),
             $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $20)
     returning id`,
    [
      options.runId,
      target.source.environment,
      target.list.key,
      target.variant,
      now,
      row.status,
      collected.contentHash,
      collected.entryCount,
      row.changed,
      row.counts.added,
      row.counts.removed,
      row.counts.modified,
      row.counts.reappeared,
      row.error ?? null,
      row.status === 'held' ? 'held' : null,
      collected.fields,
      collected.pages,
      Math.round(options.durationMs()),
      row.id ?? null,
      collected.replacedValues,
    ],
  );
  return Number(rows[0]!.id);
}

/** Fields that appeared and disappeared between two snapshots' field signatures. */
function fieldDrift(before: string[], after: string[]): { added: string[]; removed: string[] } | undefined {
  const b = new Set(before);
  const a = new Set(after);
  const added = after.filter((f) => !b.has(f));
  const removed = before.filter((f) => !a.has(f));
  return added.length || removed.length ? { added, removed } : undefined;
}

/** The schema_changed digest: fields that came and went (with their JSON types) and the view columns added or widened. */
function schemaChange(drift: { added: string[]; removed: string[] } | undefined, columns: ColumnChange[]): Record<string, unknown> {
  return { fields_added: drift?.added ?? [], fields_removed: drift?.removed ?? [], columns };
}

/**
 * Applies one fetched list in ONE transaction under the target's advisory lock: compares hashes,
 * diffs set-based against the current rows, and writes the snapshot, the SCD2 close/open, the change
 * rows, the typed columns of the list's views, the alert outbox rows and the NOTIFY together.
 * Either all of it commits or none of it.
 */
export async function applyList(
  conn: Connection,
  target: Target,
  collected: CollectedList,
  staging: StagingTable,
  options: ApplyOptions,
): Promise<ApplyResult> {
  const env = target.source.environment;
  const listKey = target.list.key;
  const variant = target.variant;
  const scope = [env, listKey, variant];

  return conn.transaction(async (tx) => {
    await lockTarget(tx, env, listKey, variant);
    // Read after the lock, so times follow commit order even when transactions started out of order.
    const { rows: clock } = await tx.query<{ now: Date }>('select clock_timestamp() as now');
    const now = clock[0]!.now;
    const { lastOk, last } = await previousSnapshots(tx, env, listKey, variant);
    const baseline = !lastOk;

    if (lastOk?.contentHash === collected.contentHash) {
      const snapshotId = await insertSnapshot(tx, target, collected, options, now, {
        status: 'ok',
        changed: false,
        counts: zeroCounts(),
      });
      return { status: 'unchanged', snapshotId, counts: zeroCounts(), baseline: false };
    }

    // The rows an index let through unstaged are current only if nothing was applied since it was read.
    if (collected.index && (await rowsGeneration(tx, target)) !== collected.index.generation) {
      throw new StaleIndexError(`${listKey}: the current rows changed while the list was fetched`);
    }
    const firstOfTarget = baseline && !(await hasCurrentRows(tx, scope));
    if (firstOfTarget && staging.rowsAppended === 0) {
      // Nothing was spilled, so the rows are all in memory: straight into history, no staging table.
      return firstLoad(tx, target, collected, unnestRows(collected.pending, 6), options, now);
    }
    await staging.append(collected.pending, tx);
    await staging.ensure(tx);
    const large = staging.rowsAppended > options.analyzeAfterRows;
    if (large) await tx.query(`analyze ${staging.name}`);

    if (firstOfTarget) {
      return firstLoad(tx, target, collected, { from: staging.name, params: [], rows: staging.rowsAppended }, options, now);
    }

    const diff = `${staging.name}_diff`;
    // With an index, staging holds only the entries not current as fetched, and the current side is
    // the rows no entry matched, read by primary key: every other current row is unchanged, by
    // digest and key (the generation check above proves the ids are still the current rows).
    const [currentRows, params] = collected.index
      ? [
          // LIMIT keeps the lookup a nested loop on the primary key: flattened into a join, a stale
          // row estimate let the planner hash all current rows of the target instead (1.1 s at a million).
          `select e.* from unnest($1::bigint[]) as u(id)
           cross join lateral (select id, entry_key, code, description, payload, entry_hash from refdata.entries
                               where id = u.id and valid_to is null limit 1) e`,
          [collected.index.unseenIds],
        ]
      : [
          `select id, entry_key, code, description, payload, entry_hash from refdata.entries
           where environment = $1 and list_key = $2 and variant = $3 and valid_to is null`,
          scope,
        ];
    await tx.query(
      `create temp table ${diff} on commit drop as
       select coalesce(s.entry_key, c.entry_key) as entry_key,
              case when c.entry_key is null then 'added' when s.entry_key is null then 'removed' else 'modified' end as change,
              s.code as new_code, s.description as new_description, s.payload as new_payload, s.entry_hash as new_hash,
              c.id as old_id, c.code as old_code, c.description as old_description, c.payload as old_payload
       from (select distinct on (entry_key) * from ${staging.name} order by entry_key) s
       full join (${currentRows}) c on c.entry_key = s.entry_key
       where c.entry_key is null or s.entry_key is null or c.entry_hash <> s.entry_hash`,
      params,
    );
    if (large) await tx.query(`analyze ${diff}`);
    if (!baseline) {
      await tx.query(
        `update ${diff} d set change = 'reappeared'
         where change = 'added' and exists (
           select 1 from refdata.entries h
           where h.environment = $1 and h.list_key = $2 and h.variant = $3 and h.entry_key = d.entry_key)`,
        scope,
      );
    }
    const counts = zeroCounts();
    const { rows: countRows } = await tx.query<{ change: ChangeKind; n: number }>(
      `select change, count(*)::int as n from ${diff} group by change`,
    );
    for (const r of countRows) counts[r.change] = r.n;
    const current = collected.entryCount - counts.added - counts.reappeared + counts.removed;

    const maxFraction = target.source.maxRemovedFraction;
    const emptied = collected.entryCount === 0 && current > 0;
    const tooMany = current > 0 && counts.removed / current > maxFraction;
    if (!options.acceptRemovals && !baseline && (emptied || tooMany)) {
      const error = emptied
        ? `held: the fetch is empty but ${current} entries are current; run refsync sync --accept-removals to apply it`
        : `held: the fetch would remove ${counts.removed} of ${current} entries (more than ${maxFraction * 100}%); run refsync sync --accept-removals to apply it`;
      const snapshotId = await insertSnapshot(tx, target, collected, options, now, {
        status: 'held',
        changed: false,
        counts,
        error,
      });
      const heldBefore = last?.status === 'held' && last.contentHash === collected.contentHash;
      if (!heldBefore && wantsAlert(target.source, 'held', listKey)) {
        await writeAlert(
          tx,
          alertFor(target, 'held', snapshotId, {
            current_count: current,
            fetched_count: collected.entryCount,
            would_remove: counts.removed,
            max_removed_fraction: maxFraction,
            message: error,
          }),
        );
      }
      return { status: 'held', snapshotId, counts, baseline, error };
    }

    const snapshotId = await insertSnapshot(tx, target, collected, options, now, {
      status: 'ok',
      changed: true,
      counts,
    });
    let impactError: string | undefined;
    await tx.query(
      // By row id: right after a large load the table's statistics are stale, and a join on the
      // key made Postgres compare every row with the whole diff (21 s for 1% of 100,000).
      `update refdata.entries e set valid_to = $1, last_snapshot_id = $2
       from ${diff} d
       where d.change in ('removed', 'modified') and e.id = d.old_id`,
      [now, lastOk?.id ?? snapshotId],
    );
    await tx.query(
      `insert into refdata.entries
         (environment, list_key, variant, entry_key, code, description, payload, entry_hash, valid_from, first_snapshot_id, last_snapshot_id)
       select $1, $2, $3, entry_key, new_code, new_description, new_payload, new_hash, $4, $5, $5
       from ${diff} where change <> 'removed'`,
      [...scope, now, snapshotId],
    );
    const columns = await evolveListColumns(tx, listKey, collected.columnTypes, snapshotId, now);

    if (!baseline) {
      await tx.query(
        `insert into refdata.entry_changes
           (snapshot_id, environment, list_key, variant, entry_key, code, change, before, after, changed_fields, detected_at)
         select $4, $1, $2, $3, entry_key, coalesce(new_code, old_code), change, old_payload, new_payload,
                case when change = 'modified' then (
                  select array_agg(k order by k) from (
                    select jsonb_object_keys(old_payload) as k union select jsonb_object_keys(new_payload)
                  ) keys where old_payload -> k is distinct from new_payload -> k)
                end,
                $5
         from ${diff}`,
        [...scope, snapshotId, now],
      );
      await writeChangeAlerts(tx, target, diff, snapshotId, counts);
      impactError = await recordImpact(tx, target, diff, snapshotId, now);
      const drift = lastOk?.fields ? fieldDrift(lastOk.fields, collected.fields) : undefined;
      if ((drift || columns.length) && wantsAlert(target.source, 'schema_changed', listKey)) {
        await writeAlert(tx, alertFor(target, 'schema_changed', snapshotId, schemaChange(drift, columns)));
      }
    }

    await notifyChange(tx, {
      environment: env,
      list_key: listKey,
      variant,
      snapshot_id: snapshotId,
      ...counts,
    });
    return { status: 'changed', snapshotId, counts, baseline, ...(impactError ? { impactError } : {}) };
  });
}

/** One digest alert per kind of change: the count and the first entries by key, capped. */
async function writeChangeAlerts(
  tx: Queryable,
  target: Target,
  diff: string,
  snapshotId: number,
  counts: Record<ChangeKind, number>,
): Promise<void> {
  const kinds = changeKinds.filter((k) => counts[k] > 0 && wantsAlert(target.source, k, target.list.key));
  if (kinds.length === 0) return;
  const { rows } = await tx.query<{ change: ChangeKind; entry_key: string; code: string | null; description: string | null }>(
    `select change, entry_key, code, description from (
       select change, entry_key, coalesce(new_code, old_code) as code, coalesce(new_description, old_description) as description,
              row_number() over (partition by change order by entry_key) as rn
       from ${diff} where change = any($1::text[])) x
     where rn <= $2 order by change, entry_key`,
    [kinds, ALERT_ENTRY_CAP],
  );
  for (const kind of kinds) {
    const sample = rows.filter((r) => r.change === kind);
    await writeAlert(
      tx,
      alertFor(target, kind, snapshotId, {
        count: counts[kind],
        entries: sample.map((r) => ({ entry_key: r.entry_key, code: r.code, description: r.description })),
        more: Math.max(0, counts[kind] - sample.length),
      }),
    );
  }
}

/** Whether the target (environment, list, variant) has any current rows. */
export async function hasCurrentRows(tx: Queryable, scope: string[]): Promise<boolean> {
  const { rows } = await tx.query<{ found: boolean }>(
    `select exists (select 1 from refdata.entries
                     where environment = $1 and list_key = $2 and variant = $3 and valid_to is null) as found`,
    scope,
  );
  return rows[0]?.found === true;
}

/**
 * The first load of a target: every entry is new, so the rows go straight into the history table,
 * with no diff. It is a baseline: no change rows, no alerts.
 */
async function firstLoad(
  tx: Queryable,
  target: Target,
  collected: CollectedList,
  rows: RowSource,
  options: ApplyOptions,
  now: Date,
): Promise<ApplyResult> {
  const result = await recordFirstLoad(tx, target, collected, options, now);
  // Identical duplicates came twice; only then is the de-duplicating sort worth paying for.
  const source =
    rows.rows === collected.entryCount ? rows.from : `(select distinct on (entry_key) * from ${rows.from} order by entry_key) d`;
  await openFirstRows(tx, target, now, result.snapshotId, { ...rows, from: source });
  return result;
}

/**
 * Opens a first load's rows under its snapshot, current from `now`. The source's parameters are
 * numbered from $6 (unnestRows(rows, 6)): the first five are the target, the time and the snapshot.
 */
export async function openFirstRows(tx: Queryable, target: Target, now: Date, snapshotId: number, rows: RowSource): Promise<void> {
  await tx.query(
    `insert into refdata.entries
       (environment, list_key, variant, entry_key, code, description, payload, entry_hash, valid_from, first_snapshot_id, last_snapshot_id)
     select $1, $2, $3, entry_key, code, description, payload, entry_hash, $4, $5, $5 from ${rows.from}`,
    [target.source.environment, target.list.key, target.variant, now, snapshotId, ...rows.params],
  );
}

/**
 * The snapshot and the NOTIFY of a first load, whose rows are (or are about to be) written under
 * the snapshot's id: every entry counts as added.
 */
export async function recordFirstLoad(
  tx: Queryable,
  target: Target,
  collected: CollectedList,
  options: ApplyOptions,
  now: Date,
  snapshotId?: number,
): Promise<ApplyResult> {
  const counts = { ...zeroCounts(), added: collected.entryCount };
  const row: SnapshotInsert = { status: 'ok', changed: true, counts };
  if (snapshotId !== undefined) row.id = snapshotId;
  const id = await insertSnapshot(tx, target, collected, options, now, row);
  // A baseline records no changes and no alerts, but the list's views must show its columns.
  await evolveListColumns(tx, target.list.key, collected.columnTypes, id, now);
  await notifyChange(tx, {
    environment: target.source.environment,
    list_key: target.list.key,
    variant: target.variant,
    snapshot_id: id,
    ...counts,
  });
  return { status: 'changed', snapshotId: id, counts, baseline: true };
}
