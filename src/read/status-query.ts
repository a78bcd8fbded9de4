import type { Queryable } from '../db/database.ts';
import { SCHEMA_HELD } from '../util/error-codes.ts';

export interface TargetStatusRow {
  environment: string;
  list_key: string;
  variant: string;
  last_status: string;
  last_fetched_at: Date;
  last_error: string | null;
  last_error_code: string | null;
  /** Why the latest snapshot is held: `schema` (its schema policy) or `removals` (too many); null when not held. */
  held_reason: 'schema' | 'removals' | null;
  /** Values of the last ok fetch that do not fit their typed column. */
  nonconforming: number;
  /** A change of the list's columns waiting for objects of the user that depend on its views; null when none. */
  views_waiting: { since: string; views: string[]; dependents: string[]; columns: unknown[] } | null;
  last_success_at: Date | null;
  last_change_at: Date | null;
  current_entries: number;
  /** Why the impact of the target's last change on the user's data was not computed; null when it was. */
  impact_error: string | null;
}

export interface RunRow {
  id: number;
  environment: string;
  source: string;
  trigger: string;
  status: string;
  started_at: Date;
  finished_at: Date | null;
  targets_total: number;
  targets_done: number;
  targets_failed: number;
  error: string | null;
}

/** Last fetch, last success, last change and current size of every target ever synced. */
export async function targetStatus(q: Queryable): Promise<TargetStatusRow[]> {
  const { rows } = await q.query<TargetStatusRow>(`
    with last as (
      select distinct on (environment, list_key, variant)
             environment, list_key, variant, status as last_status, fetched_at as last_fetched_at, error as last_error,
             error_code as last_error_code,
             case when status = 'held' then case when error_code = '${SCHEMA_HELD}' then 'schema' else 'removals' end end as held_reason
      from refdata.snapshots order by environment, list_key, variant, id desc),
    last_ok as (
      select distinct on (environment, list_key, variant) environment, list_key, variant, nonconforming
      from refdata.snapshots where status = 'ok' order by environment, list_key, variant, id desc),
    ok as (
      select environment, list_key, variant, max(fetched_at) filter (where status = 'ok') as last_success_at,
             max(fetched_at) filter (where changed) as last_change_at
      from refdata.snapshots group by 1, 2, 3),
    cur as (
      select environment, list_key, variant, count(*)::int as current_entries
      from refdata.entries where valid_to is null group by 1, 2, 3),
    impact as (
      select distinct on (environment, list_key, variant) environment, list_key, variant, impact_error
      from refdata.snapshots where changed order by environment, list_key, variant, id desc)
    select last.*, coalesce(last_ok.nonconforming, 0) as nonconforming,
           (select jsonb_build_object('since', w.since, 'views', w.views, 'dependents', w.dependents, 'columns', w.columns)
            from refdata.list_views_waiting w where w.list_key = last.list_key) as views_waiting,
           ok.last_success_at, ok.last_change_at, coalesce(cur.current_entries, 0) as current_entries,
           impact.impact_error
    from last
    join ok using (environment, list_key, variant)
    left join last_ok using (environment, list_key, variant)
    left join cur using (environment, list_key, variant)
    left join impact using (environment, list_key, variant)
    order by environment, list_key, variant`);
  return rows;
}

/** The latest run of each source. */
export async function lastRuns(q: Queryable): Promise<RunRow[]> {
  const { rows } = await q.query<RunRow>(`
    select distinct on (source) id, environment, source, trigger, status, started_at, finished_at,
           targets_total, targets_done, targets_failed, error
    from refdata.sync_runs order by source, id desc`);
  return rows;
}
