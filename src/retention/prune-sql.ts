// What retention deletes, by name: the rows each pass may delete (prune.ts counts or deletes them).

/**
 * Unchanged ok snapshots older than the cut-off, except each target's last snapshot and last ok one
 * (status, the next sync's comparison and the metrics read them) and any an alert names. Changed,
 * held and failed snapshots are history and stay. Entries point only at changed snapshots
 * (first_snapshot_id, last_snapshot_id) and change rows too, so neither loses its reference.
 */
export const prunableSnapshots = `
  select s.id from refdata.snapshots s
   where s.status = 'ok' and not s.changed
     and s.fetched_at < clock_timestamp() - make_interval(days => $1)
     and exists (select 1 from refdata.snapshots n
                  where n.environment = s.environment and n.list_key = s.list_key and n.variant = s.variant and n.id > s.id)
     and not exists (select 1 from refdata.target_last_ok t where t.snapshot_id = s.id)
     and not exists (select 1 from refdata.alerts a where a.snapshot_id = s.id)`;

export const prunableAlerts = `
  select a.id from refdata.alerts a
   where a.state in ('delivered', 'skipped') and a.created_at < clock_timestamp() - make_interval(days => $1)`;

/** Finished runs older than the cut-off that nothing refers to, except each environment's last run. */
export const prunableRuns = `
  select r.id from refdata.sync_runs r
   where r.finished_at is not null and r.finished_at < clock_timestamp() - make_interval(days => $1)
     and exists (select 1 from refdata.sync_runs n where n.environment = r.environment and n.started_at > r.started_at)
     and not exists (select 1 from refdata.snapshots s where s.run_id = r.id)
     and not exists (select 1 from refdata.alerts a where a.run_id = r.id)`;

/** How many rows a selection of ids would delete. */
export const countOf = (select: string): string => `select count(*)::int as n from (${select}) x`;

/** Deletes up to a batch of the selected ids of a refdata table. */
export const deleteBatch = (table: string, select: string, batch: number): string =>
  `with gone as (delete from refdata.${table} where id in (${select} limit ${batch}) returning 1) select count(*)::int as n from gone`;
