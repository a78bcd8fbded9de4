// The end of a run, told to whoever chains work after it (dbt, Airflow): NOTIFY refdata_runs for
// every finished run, and a run_completed alert (outbox, webhook, Slack) when REFSYNC_ALERT_ON
// asks for it. Both carry the run's outcome and its per-list counts.
import type { SourceConfig } from '../../config/types.ts';
import pg from 'pg';
import { cutToBytes } from '../../util/bounded-text.ts';
import { sqlInteger } from '../sql.ts';
import { runCompletedAlert } from './run-sql.ts';

/** Channel of the run notices; refdata_changes keeps the contract's per-list payload. */
export const RUNS_CHANNEL = 'refdata_runs';

/**
 * Postgres refuses a NOTIFY payload of 8000 bytes or more, and with it the transaction that closes
 * the run. A notice over this leaves out its lists, then cuts its error to what fits.
 */
export const NOTIFY_LIMIT = 7_900;

export interface RunListOutcome {
  list_key: string;
  variant: string;
  /** changed, unchanged, held, failed or unavailable. */
  status: string;
  snapshot_id: number;
  entries: number | null;
  added: number;
  removed: number;
  modified: number;
  reappeared: number;
  reshaped: number;
  error_code: string | null;
}

export interface RunCompleted {
  run_id: number;
  source: string;
  environment: string;
  trigger: string;
  slot: string | null;
  status: string;
  started_at: string;
  finished_at: string | null;
  targets_total: number;
  targets_done: number;
  targets_failed: number;
  error: string | null;
  lists: RunListOutcome[];
}

const bytes = (text: string) => Buffer.byteLength(text);

/**
 * The run's NOTIFY text, under NOTIFY_LIMIT bytes whatever the run's error quotes: the whole
 * outcome when it fits; else without its lists (`lists_omitted`); else with the error cut to the
 * bytes left (`error_cut`); else (labels of absurd length) the run id and status alone.
 */
export function runNotice(payload: RunCompleted): string {
  const whole = JSON.stringify(payload);
  if (bytes(whole) <= NOTIFY_LIMIT) return whole;
  const withoutLists = { ...payload, lists: undefined, lists_omitted: true };
  const listless = JSON.stringify(withoutLists);
  if (bytes(listless) <= NOTIFY_LIMIT) return listless;
  const withoutError = JSON.stringify({ ...withoutLists, error: '', error_cut: true });
  const room = NOTIFY_LIMIT - bytes(withoutError);
  if (room >= 0) return JSON.stringify({ ...withoutLists, error: cutToBytes(payload.error ?? '', room), error_cut: true });
  return JSON.stringify({ run_id: payload.run_id, status: payload.status, lists_omitted: true, error_cut: true });
}

/**
 * What tells that a run finished (its outcome `run`, no longer running): the NOTIFY, and the
 * run_completed alert when `source` asks for it (written once: a second run_completed of the same
 * run writes nothing). Run in the transaction that closed the run, they are sent and written only if
 * it commits; without parameters, so that it can send them with its COMMIT, in one round trip.
 */
export function runCompletedStatements(run: RunCompleted, source: SourceConfig | undefined): string[] {
  const notify = `select pg_notify('${RUNS_CHANNEL}', ${pg.escapeLiteral(runNotice(run))})`;
  if (!source?.alertOn.includes('run_completed')) return [notify];
  const environment = pg.escapeLiteral(run.environment);
  const alert = runCompletedAlert(sqlInteger(run.run_id), environment, pg.escapeLiteral(JSON.stringify(run)));
  return [notify, alert];
}
