import type { Queryable, Database } from '../db/database.ts';
import type { AlertRow } from './format.ts';

/**
 * The dispatcher's SQL on refdata.alerts and refdata.webhook_endpoints, by name. Times are the
 * database's (the dispatcher corrects its clock to it), so leases compare with what Postgres wrote.
 */

/** Channel of the dispatcher's wake-up: one NOTIFY per alert written, sent by Postgres on commit. */
export const ALERT_CHANNEL = 'refdata_alerts';

/**
 * Claims up to `limit` due pending alerts of these environments in one short statement (FOR UPDATE
 * SKIP LOCKED, so several workers share the outbox) and leases them by moving next_attempt_at to
 * `lease`. In id order.
 */
export async function claimDue(q: Queryable, cutoff: Date, lease: Date, environments: string[], limit: number): Promise<AlertRow[]> {
  const { rows } = await q.query<AlertRow>(
    `update refdata.alerts a
        set attempts = a.attempts + 1, next_attempt_at = $1
       from (select id from refdata.alerts
              where state = 'pending' and next_attempt_at <= $2 and environment = any($3::text[])
              order by next_attempt_at, id
              limit $4
              for update skip locked) due
      where a.id = due.id
      returning a.id, a.snapshot_id, a.run_id, a.kind, a.payload, a.created_at, a.requeued_at, a.attempts, a.environment, a.list_key, a.variant`,
    [lease, cutoff, environments, limit],
  );
  return rows.sort((x, y) => Number(x.id) - Number(y.id));
}

/** The disabled endpoints among these labels, with why each was disabled. */
export async function disabledEndpoints(q: Queryable, labels: string[]): Promise<Map<string, string>> {
  if (labels.length === 0) return new Map();
  const { rows } = await q.query<{ url: string; reason: string | null; disabled_at: Date }>(
    'select url, reason, disabled_at from refdata.webhook_endpoints where url = any($1::text[]) and disabled_at is not null',
    [labels],
  );
  return new Map(rows.map((r) => [r.url, r.reason ?? `disabled at ${new Date(r.disabled_at).toISOString()}`]));
}

/** Closes a pending alert for good; false when it was no longer pending (another worker closed it). */
export async function closeAlert(q: Queryable, id: number, state: 'delivered' | 'skipped' | 'disabled', lastError: string | null, at: Date): Promise<boolean> {
  const { affectedRows } = await q.query(
    `update refdata.alerts set state = $2, last_error = $3,
            delivered_at = case when $2 = 'delivered' then $4::timestamptz else delivered_at end
      where id = $1 and state = 'pending'`,
    [id, state, lastError, at],
  );
  return (affectedRows ?? 0) > 0;
}

/** Marks an endpoint disabled and, in the same transaction, every pending alert of the environments it serves. */
export async function disableEndpoint(db: Database, label: string, environments: string[], reason: string, at: Date): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query(
      `insert into refdata.webhook_endpoints (url, disabled_at, reason, updated_at) values ($1, $2, $3, $2)
       on conflict (url) do update set disabled_at = excluded.disabled_at, reason = excluded.reason, updated_at = excluded.updated_at`,
      [label, at, reason],
    );
    await tx.query(
      `update refdata.alerts set state = 'disabled', last_error = $2
        where state = 'pending' and environment = any($1::text[])`,
      [environments, reason],
    );
  });
}

/** Records a failed attempt (pending again at `next`, or dead), only while `lease` still holds. */
export async function recordAttemptFailed(q: Queryable, id: number, dead: boolean, lastError: string, next: Date, lease: Date): Promise<void> {
  // Only while our lease holds: if another worker took the alert meanwhile, its outcome wins.
  await q.query(
    `update refdata.alerts set state = $2, last_error = $3, next_attempt_at = $4
      where id = $1 and state = 'pending' and next_attempt_at = $5`,
    [id, dead ? 'dead' : 'pending', lastError, next, lease],
  );
}

/** When the next pending alert of these environments is due, if any. */
export async function nextDue(q: Queryable, environments: string[]): Promise<Date | undefined> {
  const { rows } = await q.query<{ next: Date | null }>(
    `select min(next_attempt_at) as next from refdata.alerts where state = 'pending' and environment = any($1::text[])`,
    [environments],
  );
  const next = rows[0]?.next;
  return next ? new Date(next) : undefined;
}

/** One alert row into the outbox, and the NOTIFY that wakes the dispatcher, in one statement. */
export const insertAlert = `with inserted as (
       insert into refdata.alerts (snapshot_id, kind, environment, list_key, variant, payload)
       values ($1, $2, $3, $4, $5, $6::jsonb)
       on conflict (snapshot_id, kind) do nothing
       returning id)
     select pg_notify('${ALERT_CHANNEL}', json_build_object('id', id, 'environment', $3::text, 'kind', $2::text)::text) from inserted`;

/** Every disabled webhook endpoint, with why. */
export const allDisabledEndpoints = 'select url, disabled_at, reason from refdata.webhook_endpoints order by disabled_at desc nulls last, url';

/** The outbox for `refsync alerts`, newest first. */
export const alertList = `select id, snapshot_id, run_id, kind, payload, created_at, requeued_at, delivered_at, next_attempt_at, attempts, last_error,
            environment, list_key, variant, state
       from refdata.alerts
      where ($1::boolean is false or state = 'pending')
      order by id desc
      limit $2`;

/** One alert's state and environment, for `refsync alerts retry`. */
export const alertState = 'select state, environment from refdata.alerts where id = $1';

/** Enables a disabled webhook endpoint again, saying why. */
export const enableEndpoint = `update refdata.webhook_endpoints set disabled_at = null, reason = $2, updated_at = now()
            where url = $1 and disabled_at is not null`;

/** Puts an alert back in the outbox as new. */
export const requeueAlert = `update refdata.alerts set state = 'pending', attempts = 0, next_attempt_at = now(), requeued_at = now()
        where id = $1 and state = any($2::text[])`;

/** How many alerts are in each state. */
export const alertCountsByState = 'select state, count(*)::int as n from refdata.alerts group by state';
