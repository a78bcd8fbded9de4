// The detail of one list, per source and variant: what `refsync status --list KEY` prints (and its
// --json, which keeps every column). Read-only; each query is bounded.
import type { Queryable } from '../db/database.ts';

/** One variant of the list in one environment, as its latest snapshot left it. */
export interface ListTargetRow {
  environment: string;
  /** The source name of the run that recorded the latest snapshot ('' for runs before names were kept). */
  source: string;
  list_key: string;
  variant: string;
  snapshot_id: number;
  status: string;
  error_code: string | null;
  error: string | null;
  fetched_at: Date;
  last_ok_at: Date | null;
  last_change_at: Date | null;
  current_entries: number;
  /** Failed snapshots after the last ok one (all of them when it never synced ok). */
  consecutive_failures: number;
}

/** Every column of a snapshot row, and the source of its run. */
export type SnapshotDetail = Record<string, unknown> & { id: number; fetched_at: Date; status: string; error: string | null };

/** Every column of a change row. */
export type ChangeDetail = Record<string, unknown> & {
  id: number;
  detected_at: Date;
  change: string;
  entry_key: string;
  code: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  changed_fields: string[] | null;
};

/**
 * The variants of `listKey` that have a snapshot, in the environments of `source` (a source name as
 * runs record it, or an environment; null for all), ordered by environment and variant.
 */
export async function listTargets(q: Queryable, listKey: string, source: string | null): Promise<ListTargetRow[]> {
  const { rows } = await q.query<ListTargetRow>(
    `with latest as (
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
     order by l.environment, l.variant`,
    [listKey, source],
  );
  return rows;
}

/** The target's newest snapshots, newest first, every column. */
export async function lastSnapshots(q: Queryable, t: Pick<ListTargetRow, 'environment' | 'list_key' | 'variant'>, limit: number): Promise<SnapshotDetail[]> {
  const { rows } = await q.query<SnapshotDetail>(
    `select s.*, r.source from refdata.snapshots s left join refdata.sync_runs r on r.id = s.run_id
     where s.environment = $1 and s.list_key = $2 and s.variant = $3
     order by s.id desc limit $4`,
    [t.environment, t.list_key, t.variant, limit],
  );
  return rows;
}

/** The target's newest entry changes, newest first, every column (before and after whole). */
export async function lastChanges(q: Queryable, t: Pick<ListTargetRow, 'environment' | 'list_key' | 'variant'>, limit: number): Promise<ChangeDetail[]> {
  const { rows } = await q.query<ChangeDetail>(
    `select * from refdata.entry_changes
     where environment = $1 and list_key = $2 and variant = $3
     order by detected_at desc, id desc limit $4`,
    [t.environment, t.list_key, t.variant, limit],
  );
  return rows;
}
