// The read model's SQL on runs, snapshots and a target's history, shared by `refsync status` and
// the status pages, by name (docs/architecture.md, "Where SQL lives").
import { SCHEMA_HELD } from '../util/error-codes.ts';

/** A list's targets with their last snapshot. */
export const listTargetsQuery = `with latest as (
       select distinct on (s.environment, s.variant) s.environment, coalesce(r.source, '') as source, s.list_key, s.variant,
              s.id as snapshot_id, s.status, s.error_code, s.error, s.fetched_at
       from refdata.snapshots s left join refdata.sync_runs r on r.id = s.run_id
       where s.list_key = $1
       order by s.environment, s.variant, s.id desc)
     select l.*,
            (select max(o.fetched_at) from refdata.snapshots o
              where o.environment = l.environment and o.list_key = l.list_key and o.variant = l.variant and o.status = 'ok') as last_ok_at,
            (select max(c.fetched_at) from refdata.snapshots c
              where c.environment = l.environment and c.list_key = l.list_key and c.variant = l.variant and c.changed) as last_change_at,
            (select count(*)::int from refdata.entries e
              where e.environment = l.environment and e.list_key = l.list_key and e.variant = l.variant and e.valid_to is null) as current_entries,
            (select count(*)::int from refdata.snapshots f
              where f.environment = l.environment and f.list_key = l.list_key and f.variant = l.variant and f.status = 'failed'
                and f.id > coalesce((select max(o.id) from refdata.snapshots o
                                      where o.environment = l.environment and o.list_key = l.list_key and o.variant = l.variant and o.status = 'ok'), 0)
            ) as consecutive_failures
     from latest l
     where $2::text is null or l.source = $2 or l.environment = $2
     order by l.environment, l.variant`;

/** A target's snapshots, newest first. */
export const targetSnapshots = `select s.*, r.source from refdata.snapshots s left join refdata.sync_runs r on r.id = s.run_id
     where s.environment = $1 and s.list_key = $2 and s.variant = $3
     order by s.id desc limit $4`;

/** A target's changes, newest first. */
export const targetChanges = `select * from refdata.entry_changes
     where environment = $1 and list_key = $2 and variant = $3
     order by detected_at desc, id desc limit $4`;

/** One run. */
export const runRow = `select id, environment, source, trigger, status, started_at, finished_at, targets_total, targets_done, targets_failed, error
     from refdata.sync_runs where id = $1`;

/** A run's snapshots. */
export const runSnapshots = `select id, list_key, variant, fetched_at, status, entry_count, added, removed, modified, reappeared, error, error_code, duration_ms
     from refdata.snapshots where run_id = $1
     order by list_key, variant, id`;

/** Each target's last snapshot, with its run's source. */
export const latestTargetSyncsQuery = `
    select distinct on (s.environment, s.list_key, s.variant)
           r.source, s.environment, s.list_key, s.variant, s.fetched_at, s.status,
           s.added, s.removed, s.modified, s.reappeared, s.reshaped, s.error, s.error_code, ok.entry_count as entries, ok.fetched_at as last_ok_at,
           changed.impact_error
    from refdata.snapshots s
    left join refdata.sync_runs r on r.id = s.run_id
    left join lateral (
      select o.entry_count, o.fetched_at from refdata.snapshots o
      where o.environment = s.environment and o.list_key = s.list_key and o.variant = s.variant and o.status = 'ok'
      order by o.id desc limit 1) ok on true
    left join lateral (
      select c.impact_error from refdata.snapshots c
      where c.environment = s.environment and c.list_key = s.list_key and c.variant = s.variant and c.changed
      order by c.id desc limit 1) changed on true
    order by s.environment, s.list_key, s.variant, s.id desc`;

/** Failed snapshots of targets that synced since (neither failed nor unavailable), newest first. */
export const recoveredFailureRows = `select s.id, r.source, s.environment, s.list_key, s.variant, s.fetched_at, s.status, s.error_code, s.error
     from refdata.snapshots s left join refdata.sync_runs r on r.id = s.run_id
     where s.status in ('failed', 'unavailable')
       and exists (select 1 from refdata.snapshots l
                   where l.environment = s.environment and l.list_key = s.list_key and l.variant = s.variant
                     and l.id > s.id and l.status not in ('failed', 'unavailable'))
     order by s.id desc limit $1`;

/** Last fetch, last success, last change and current size of every target ever synced. */
export const targetStatusQuery = `
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
    order by environment, list_key, variant`;

/** Each source's last run. */
export const lastRunPerSource = `
    select distinct on (source) id, environment, source, trigger, status, started_at, finished_at,
           targets_total, targets_done, targets_failed, error
    from refdata.sync_runs order by source, id desc`;

/** The held flag and the failure streak of every target ever synced. */
export const targetHealthQuery = `
    with latest as (
      select distinct on (environment, list_key, variant) environment, list_key, variant, status, error_code
      from refdata.snapshots order by environment, list_key, variant, id desc),
    last_ok as (
      select environment, list_key, variant, max(id) as ok_id
      from refdata.snapshots where status = 'ok' group by 1, 2, 3)
    select l.environment, l.list_key, l.variant, l.status = 'held' as held,
           case when l.status = 'held' then case when l.error_code = '${SCHEMA_HELD}' then 'schema' else 'removals' end end as held_reason,
           (select count(*)::int from refdata.snapshots f
            where f.environment = l.environment and f.list_key = l.list_key and f.variant = l.variant
              and f.status in ('failed', 'unavailable') and f.id > coalesce(o.ok_id, 0)) as consecutive_failures
    from latest l left join last_ok o using (environment, list_key, variant)
    order by 1, 2, 3`;

/** A page of a target's snapshots. */
export const historySnapshots = `select s.id, s.run_id, s.fetched_at, s.status, s.entry_count, s.added, s.removed, s.modified, s.reappeared, s.error, s.error_code, s.duration_ms,
            s.status = 'ok' and not exists (
              select 1 from refdata.snapshots p
              where p.environment = s.environment and p.list_key = s.list_key and p.variant = s.variant and p.status = 'ok' and p.id < s.id) as baseline
     from refdata.snapshots s
     where s.environment = $1 and s.list_key = $2 and s.variant = $3
     order by s.id desc limit $4`;

/** A page of a target's changes. */
export const historyChanges = `select id, snapshot_id, detected_at, change, entry_key, code, changed_fields, before, after
     from refdata.entry_changes
     where environment = $1 and list_key = $2 and variant = $3
     order by detected_at desc, id desc limit $4`;
