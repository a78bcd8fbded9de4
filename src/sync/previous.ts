import type { Queryable } from '../db/database.ts';
import { targetIs } from './sql.ts';

export interface PreviousSnapshot {
  id: number;
  status: string;
  contentHash: string | null;
  fields: string[] | null;
  /** Distinct entries fetched (null for a snapshot that fetched nothing). */
  entryCount: number | null;
}

/** The last ok snapshot of a target (the state its current rows reflect), and its last snapshot of any status. */
export async function previousSnapshots(
  q: Queryable,
  environment: string,
  listKey: string,
  variant: string,
): Promise<{ lastOk?: PreviousSnapshot; last?: PreviousSnapshot }> {
  const { rows } = await q.query<{ kind: string; id: number; status: string; content_hash: string | null; fields: string[] | null; entry_count: number | null }>(
    `(select 'ok' as kind, id, status, content_hash, fields, entry_count from refdata.snapshots
       where ${targetIs()} and status = 'ok' order by id desc limit 1)
     union all
     (select 'last' as kind, id, status, content_hash, fields, entry_count from refdata.snapshots
       where ${targetIs()} order by id desc limit 1)`,
    [environment, listKey, variant],
  );
  const pick = (kind: string): PreviousSnapshot | undefined => {
    const r = rows.find((row) => row.kind === kind);
    return r
      ? { id: Number(r.id), status: r.status, contentHash: r.content_hash, fields: r.fields, entryCount: r.entry_count }
      : undefined;
  };
  const result: { lastOk?: PreviousSnapshot; last?: PreviousSnapshot } = {};
  const lastOk = pick('ok');
  const last = pick('last');
  if (lastOk) result.lastOk = lastOk;
  if (last) result.last = last;
  return result;
}
