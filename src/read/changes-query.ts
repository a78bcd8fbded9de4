import type { Queryable } from '../db/database.ts';

export interface ChangeRow {
  id: number;
  detected_at: Date;
  environment: string;
  list_key: string;
  variant: string;
  change: string;
  entry_key: string;
  code: string | null;
  changed_fields: string[] | null;
  /** Per usage column, the facts in use with a removed or modified code (null when none). */
  impact: unknown;
  description: string | null;
  before: unknown;
  after: unknown;
}

export interface ChangesFilter {
  lists: readonly string[] | null;
  since: Date | null;
  environment: string | null;
  limit: number;
}

/** Recorded entry changes, newest first (`refsync changes` and the status page). */
export async function recentChanges(q: Queryable, filter: ChangesFilter): Promise<ChangeRow[]> {
  const { rows } = await q.query<ChangeRow>(
    `select id, detected_at, environment, list_key, variant, change, entry_key, code, changed_fields, impact,
            coalesce(after ->> 'description', before ->> 'description', after ->> 'name', before ->> 'name') as description,
            before, after
     from refdata.entry_changes
     where ($1::text[] is null or list_key = any($1))
       and ($2::timestamptz is null or detected_at >= $2)
       and ($3::text is null or environment = $3)
     order by detected_at desc, id desc
     limit $4`,
    [filter.lists, filter.since, filter.environment, filter.limit],
  );
  return rows;
}
