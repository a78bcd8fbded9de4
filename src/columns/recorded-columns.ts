// The recorded schema (refdata.list_columns) and its evolution: the columns of a list follow the
// fields and types its fetches serve, in the transaction that applies the fetch.
import type { ListKey } from '../catalog/list-keys.ts';
import type { Target } from '../catalog/targets.ts';
import type { Queryable } from '../db/database.ts';
import { listHistoryView } from '../dbt/descriptions.ts';
import { nameNewFields } from './column-name.ts';
import type { ColumnType } from './column-type.ts';
import { conform, type FieldValues } from './conformance.ts';
import { settleListViews, viewsWaiting, type ViewsSettled } from './waiting-views.ts';
import type { TypedColumn } from './typed-column.ts';
import { readerFunction, type ColumnShape } from './typed-sql.ts';

/** One change of a list's columns, as the schema_changed alert reports it. */
export interface ColumnChange {
  field: string;
  column: string;
  change: 'added' | 'widened';
  from?: ColumnType;
  to: ColumnType;
}

/** The typed columns of a list as its views have them now, in view order. */
export async function readTypedColumns(q: Queryable, key: ListKey): Promise<TypedColumn[]> {
  const { rows } = await q.query<{ field: string; column_name: string; data_type: ColumnType; position: number; since: Date; since_snapshot: string | null }>(
    `select c.field, c.column_name, c.data_type, c.position, f.recorded_at as since, f.first_snapshot_id as since_snapshot
     from refdata.list_columns c
     cross join lateral (select recorded_at, first_snapshot_id from refdata.list_columns f
                         where f.list_key = c.list_key and f.field = c.field order by f.recorded_at, f.id limit 1) f
     where c.list_key = $1 and c.replaced_at is null
     order by c.position`,
    [key],
  );
  return rows.map((r) => ({
    field: r.field,
    column: r.column_name,
    type: r.data_type,
    position: r.position,
    since: r.since,
    sinceSnapshot: r.since_snapshot === null ? null : Number(r.since_snapshot),
  }));
}

/** Serialises the column changes of one list (its variants and environments share the views). */
export async function lockListColumns(q: Queryable, key: ListKey): Promise<void> {
  await q.query(`select pg_advisory_xact_lock(hashtext('refsync.list_columns'), hashtext($1))`, [key]);
}

/** The target whose fetch a plan is for: its own current rows are the fetch, the others are read. */
export interface PlanTarget {
  environment: string;
  variant: string;
}

export function planTarget(target: Target): PlanTarget {
  return { environment: target.source.environment, variant: target.variant };
}

/** What a fetch does to a list's columns, decided (under the list's lock) before anything is written. */
export interface ColumnPlan {
  key: ListKey;
  /** The typed columns as the views will have them, in view order. */
  columns: ColumnShape[];
  added: Array<ColumnShape & { position: number }>;
  widened: Array<ColumnShape & { position: number; from: ColumnType }>;
  /** What changed, as the schema_changed alert reports it; empty: no DDL. */
  changes: ColumnChange[];
  /** The fetch's values that do not fit their column's type. */
  nonconforming: number;
  observedFields: string[];
  /** A change of the list's views was waiting for objects of the user: retried with this plan. */
  viewsWaiting: boolean;
}

/**
 * Plans the recorded columns for the fields and values a fetch (or the stored history) showed: a
 * column for each new field, typed by its values; a recorded column keeps its type while any current
 * value of the field fits it (the others are nonconforming), and changes type only when none does,
 * in this fetch nor in the current rows of the list's other targets. A field the fetch lacks keeps
 * its column. Takes the list's column lock for the caller's transaction.
 */
export async function planListColumns(q: Queryable, key: ListKey, observed: ReadonlyMap<string, FieldValues>, target?: PlanTarget): Promise<ColumnPlan> {
  await lockListColumns(q, key);
  const recorded = await readTypedColumns(q, key);
  const byField = new Map(recorded.map((c) => [c.field, c]));
  const newFields = [...observed.keys()].filter((f) => !byField.has(f));
  const reserved = listHistoryView(key).columns.map((c) => c.name);
  const names = nameNewFields(
    newFields,
    reserved,
    recorded.map((c) => c.column),
  );
  const first = recorded.reduce((max, c) => Math.max(max, c.position), 0) + 1;
  const added = [...names]
    .sort((a, b) => (a[1] < b[1] ? -1 : 1))
    .map(([field, column], i) => ({ field, column, type: observed.get(field)!.type, position: first + i }));
  const waiting = await viewsWaiting(q, key);
  const plan: ColumnPlan = { key, columns: [], added, widened: [], changes: [], nonconforming: 0, observedFields: [...observed.keys()], viewsWaiting: waiting };
  for (const a of added) plan.changes.push({ field: a.field, column: a.column, change: 'added', to: a.type });
  for (const c of recorded) {
    const values = observed.get(c.field);
    const met = values ? conform(c.type, values) : { type: c.type, nonconforming: 0 };
    let type = met.type;
    if (met.changedKind && !(await othersFit(q, key, c.field, met.type, target))) type = met.changedKind;
    else plan.nonconforming += met.nonconforming;
    plan.columns.push({ field: c.field, column: c.column, type });
    if (type === c.type) continue;
    plan.widened.push({ field: c.field, column: c.column, type, position: c.position, from: c.type });
    plan.changes.push({ field: c.field, column: c.column, change: 'widened', from: c.type, to: type });
  }
  plan.columns.push(...added.map(({ field, column, type }) => ({ field, column, type })));
  return plan;
}

/** Whether a current value of the field in another target of the list still fits `type`. */
async function othersFit(q: Queryable, key: ListKey, field: string, type: ColumnType, target: PlanTarget | undefined): Promise<boolean> {
  const read = readerFunction(type);
  if (!target || !read) return false;
  const { rows } = await q.query<{ fits: boolean }>(
    `select exists (select 1 from refdata.entries
       where list_key = $1 and valid_to is null and not (environment = $2 and variant = $3)
         and ${read}(payload -> $4) is not null) as fits`,
    [key, target.environment, target.variant, field],
  );
  return rows[0]!.fits;
}

/**
 * Records a plan in the caller's transaction and brings the views along, so they change exactly
 * when the data does: the new columns, the new types, and last_snapshot_id of the columns the fetch
 * served. A plan without changes (and no change waiting) costs no DDL and no lock on the views.
 * Views that objects of the user keep from being re-created wait (src/columns/waiting-views.ts).
 */
export async function applyColumnPlan(q: Queryable, plan: ColumnPlan, snapshotId: number | null, now: Date): Promise<ViewsSettled> {
  const { key, added } = plan;
  if (added.length) {
    await q.query(
      `insert into refdata.list_columns (list_key, field, column_name, position, data_type, first_snapshot_id, last_snapshot_id, recorded_at)
       select $1, f.field, f.column_name, f.position, f.data_type, $2::bigint, $2::bigint, $3::timestamptz
       from unnest($4::text[], $5::text[], $6::int[], $7::text[]) as f(field, column_name, position, data_type)`,
      [key, snapshotId, now, added.map((a) => a.field), added.map((a) => a.column), added.map((a) => a.position), added.map((a) => a.type)],
    );
  }
  for (const c of plan.widened) {
    await q.query(
      `update refdata.list_columns set replaced_at = $3, last_snapshot_id = coalesce($4, last_snapshot_id)
       where list_key = $1 and field = $2 and replaced_at is null`,
      [key, c.field, now, snapshotId],
    );
    await q.query(
      `insert into refdata.list_columns (list_key, field, column_name, position, data_type, first_snapshot_id, last_snapshot_id, recorded_at)
       values ($1, $2, $3, $4, $5, $6, $6, $7)`,
      [key, c.field, c.column, c.position, c.type, snapshotId, now],
    );
  }
  if (snapshotId !== null) {
    await q.query(
      `update refdata.list_columns set last_snapshot_id = $2
       where list_key = $1 and replaced_at is null and field = any($3::text[]) and last_snapshot_id is distinct from $2`,
      [key, snapshotId, plan.observedFields],
    );
  }
  return plan.changes.length || plan.viewsWaiting ? settleListViews(q, key, plan.changes, snapshotId, now) : {};
}

/** Plans and applies in one step: the columns of a list after a fetch (or the stored history). */
export async function evolveListColumns(
  q: Queryable,
  key: ListKey,
  observed: ReadonlyMap<string, FieldValues>,
  snapshotId: number | null,
  now: Date,
  target?: PlanTarget,
): Promise<ColumnPlan> {
  const plan = await planListColumns(q, key, observed, target);
  await applyColumnPlan(q, plan, snapshotId, now);
  return plan;
}
