// The SQL on refdata.sync_runs, by name: opening, counting and closing runs, and finding the ones
// left running (docs/architecture.md, "Where SQL lives").
import { ALERT_CHANNEL } from '../../alerts/outbox-sql.ts';

/** The running run of a source's slot. */
export const runningRunOfSlot = "select id from refdata.sync_runs where source = $1 and slot = $2 and status = 'running'";

/** The runs the queue started that still run. */
export const runningQueuedRuns = `select id, source, slot from refdata.sync_runs
     where status = 'running' and trigger <> 'cli' and slot is not null
       and started_at < clock_timestamp() - make_interval(secs => $1::float8 / 1000)
     order by id limit 200`;

/** A run's status. */
export const runStatus = 'select status from refdata.sync_runs where id = $1';

/** Reads no row: fails unless refdata.sync_runs exists and this login may read it (the schema is migrated). */
export const runsReadable = 'select 1 from refdata.sync_runs limit 0';

/** Opens a run, unless one of the same source and slot exists. */
export const insertRun = `insert into refdata.sync_runs (environment, source, trigger, status, slot, targets_total, started_at)
     values ($1, $2, $3, 'running', $4, $5, clock_timestamp())
     on conflict (source, slot) do nothing
     returning id`;

/** The run of a source's slot. */
export const runOfSlot = 'select id from refdata.sync_runs where source = $1 and slot = $2';

/** Counts a run going on in one statement (refdata.advance_run, migration 0011). */
export const advanceRun = 'select refdata.advance_run($1) as advanced';

/** A run's progress from its snapshots, its row locked (refdata.run_progress). */
export const runProgress = (runId: number): string => `select status, targets_total, done, failed from refdata.run_progress(${runId})`;

/** The run's lists that did not sync ($1: the run): the latest snapshot of each list with no ok one (run-error.ts). */
export const runProblemsQuery = `select distinct on (s.list_key, s.variant) s.list_key, s.variant, s.status, s.error, s.error_code
     from refdata.snapshots s
     where s.run_id = $1 and s.status <> 'ok'
       and not exists (select 1 from refdata.snapshots o
                       where o.run_id = $1 and o.list_key = s.list_key and o.variant = s.variant and o.status = 'ok')
     order by s.list_key, s.variant, s.id desc`;

/** Sets a run's progress, and its outcome once every target has one. */
export const updateRunProgress = `update refdata.sync_runs set
           targets_done = $2,
           targets_failed = $3,
           status = case when $2 < targets_total then 'running'
                         when $3 = 0 then 'succeeded'
                         when $3 >= targets_total then 'failed'
                         else 'partial' end,
           finished_at = case when $2 >= targets_total then clock_timestamp() end,
           error = $4
         where id = $1`;

/** Fails a run still running. */
export const failRunningRun = `update refdata.sync_runs set status = 'failed', finished_at = clock_timestamp(), error = $2 where id = $1 and status = 'running'`;

/** A source's in-process runs still marked running. */
export const runningCliRuns = "select id from refdata.sync_runs where source = $1 and status = 'running' and trigger = 'cli'";

/**
 * A statement that updates one run (`update`: an UPDATE of refdata.sync_runs, without RETURNING) and
 * returns it as its outcome (RunCompleted), with each target's last snapshot in it: one round trip.
 * No row when the update changed none.
 */
export function updatedRunCompleted(update: string): string {
  return `with r as (${update} returning *)
     select r.id::int as run_id, r.source, r.environment, r.trigger, r.slot, r.status,
            to_json(r.started_at) #>> '{}' as started_at, to_json(r.finished_at) #>> '{}' as finished_at,
            r.targets_total, r.targets_done, r.targets_failed, r.error,
            coalesce((select json_agg(json_build_object(
                       'list_key', s.list_key, 'variant', s.variant,
                       'status', case when s.status = 'ok' then case when s.changed then 'changed' else 'unchanged' end else s.status end,
                       'snapshot_id', s.id, 'entries', s.entry_count, 'added', s.added, 'removed', s.removed,
                       'modified', s.modified, 'reappeared', s.reappeared, 'reshaped', s.reshaped, 'error_code', s.error_code)
                       order by s.list_key, s.variant)
                      from (select distinct on (list_key, variant) * from refdata.snapshots
                             where run_id = r.id order by list_key, variant, id desc) s), '[]') as lists
       from r`;
}

/**
 * The run_completed alert of a run (written once: a second of the same run writes nothing) and the
 * NOTIFY that wakes the dispatcher. Without parameters, to go with the COMMIT: each argument is
 * already a SQL literal (`runId` an integer, `environment` and `payload` escaped).
 */
export const runCompletedAlert = (runId: string, environment: string, payload: string): string =>
  `with inserted as (
       insert into refdata.alerts (run_id, kind, environment, list_key, variant, payload)
       values (${runId}, 'run_completed', ${environment}, '', '', ${payload}::jsonb)
       on conflict (run_id, kind) where run_id is not null do nothing
       returning id)
     select pg_notify('${ALERT_CHANNEL}', json_build_object('id', id, 'environment', ${environment}::text, 'kind', 'run_completed')::text) from inserted`;
