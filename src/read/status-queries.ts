// The SQL behind the status page at `/`, by name. Read-only; each query is bounded.
import type { Queryable } from '../db/database.ts';

/** One snapshot of a target, with the source of the run that recorded it. */
interface SnapshotRow {
  source: string | null;
  environment: string;
  list_key: string;
  variant: string;
  fetched_at: Date;
  status: string;
  error: string | null;
  error_code: string | null;
}

/** The latest snapshot of every target, with the last ok snapshot. */
export interface TargetSyncRow extends SnapshotRow {
  added: number;
  removed: number;
  modified: number;
  reappeared: number;
  reshaped: number;
  /** Entries in the last ok snapshot: what readers see now. */
  entries: number | null;
  last_ok_at: Date | null;
  /** Why the impact of the target's last change on the user's data was not computed; null when it was. */
  impact_error: string | null;
}

export interface FailureRow extends SnapshotRow {
  id: number;
}

export async function latestTargetSyncs(q: Queryable): Promise<TargetSyncRow[]> {
  const { rows } = await q.query<TargetSyncRow>(`
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
    order by s.environment, s.list_key, s.variant, s.id desc`);
  return rows;
}

/**
 * The newest failed or unavailable snapshots of lists that have synced since (a later snapshot
 * neither failed nor unavailable), newest first: failures that no longer need anyone.
 */
export async function recoveredFailures(q: Queryable, limit: number): Promise<FailureRow[]> {
  const { rows } = await q.query<FailureRow>(
    `select s.id, r.source, s.environment, s.list_key, s.variant, s.fetched_at, s.status, s.error_code, s.error
     from refdata.snapshots s left join refdata.sync_runs r on r.id = s.run_id
     where s.status in ('failed', 'unavailable')
       and exists (select 1 from refdata.snapshots l
                   where l.environment = s.environment and l.list_key = s.list_key and l.variant = s.variant
                     and l.id > s.id and l.status not in ('failed', 'unavailable'))
     order by s.id desc limit $1`,
    [limit],
  );
  return rows;
}
