import type { Queryable } from '../db/database.ts';
import { SCHEMA_HELD } from '../util/error-codes.ts';

/** Whether a target needs a human: its latest snapshot held, or failing since its last ok one. */
export interface TargetHealthRow {
  environment: string;
  list_key: string;
  variant: string;
  held: boolean;
  /** Why it is held: `schema` (its schema policy) or `removals` (a mass removal); null when not held. */
  held_reason: 'schema' | 'removals' | null;
  /**
   * Failed or unavailable snapshots after the last ok one (all of them when it never synced ok): a
   * list the service answers 404 for is not synced either, and its first such answer counts.
   */
  consecutive_failures: number;
}

/** The held flag and the failure streak of every target ever synced; read at scrape and page time. */
export async function targetHealth(q: Queryable): Promise<TargetHealthRow[]> {
  const { rows } = await q.query<TargetHealthRow>(`
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
    order by 1, 2, 3`);
  return rows;
}
