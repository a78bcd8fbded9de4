// A run's row in refdata.sync_runs: opened, refreshed, counted and closed, and its end told to
// whoever chains work after it.
import pg from 'pg';
import type { SourceConfig } from '../../config/types.ts';
import type { Capabilities, Connection, Database, Queryable } from '../../db/database.ts';
import { cutToBytes } from '../../util/bounded-text.ts';
import { insideOpenTransaction } from './claim-transaction.ts';
import { runErrorText, runProblems } from './run-error.ts';
import {
  updatedRunCompleted,
  insertRun,
  runOfSlot,
  advanceRun,
  countAndUpdateRun,
  updateRunProgress,
  failRunningRun,
  runningCliRuns,
  sqlInteger,
  runCompletedAlert,
} from '../sql.ts';

/**
 * The most a run's `error` takes, in bytes as JSON text (so also as UTF-8): it quotes the upstream's
 * error bodies, and it travels in the run's NOTIFY and its run_completed alert.
 */
export const RUN_ERROR_BYTES = 4000;

export type RunTrigger = 'schedule' | 'manual' | 'cli';
export type RunStatus = 'running' | 'succeeded' | 'partial' | 'failed';

export interface StartRunOptions {
  source: SourceConfig;
  trigger: RunTrigger;
  targetsTotal: number;
  /** Schedule slot or trigger id: a second start for the same slot returns the first run. */
  slot?: string;
}

/** Opens a run record, or finds the one already opened for the same source and slot. */
export async function startRun(q: Queryable, options: StartRunOptions): Promise<{ id: number; created: boolean }> {
  const { rows } = await q.query<{ id: number }>(insertRun, [
    options.source.environment,
    options.source.name,
    options.trigger,
    options.slot ?? null,
    options.targetsTotal,
  ]);
  if (rows[0]) return { id: Number(rows[0].id), created: true };
  const existing = await q.query<{ id: number }>(runOfSlot, [options.source.name, options.slot]);
  return { id: Number(existing.rows[0]!.id), created: false };
}

/**
 * Brings a run's progress up to date from its snapshots, and closes it once every target has one
 * (at once for a run of no targets). Closing it tells of it (below), for `source`'s alerts.
 * Counting distinct targets among the run's snapshots (rather than incrementing) makes a target that
 * ran twice, after a crash or a retry, count once. The row lock orders concurrent callers, so the
 * last one sees every snapshot committed before it. `atEnd`: the caller has no target of the run
 * left in flight (an in-process run once all its targets are done), so the count that only a run
 * still going on takes is not asked for first.
 */
export async function refreshRun(db: Database, runId: number, source?: SourceConfig, atEnd = false): Promise<RunStatus> {
  if (!Number.isSafeInteger(runId)) throw new Error(`sync run id ${runId} is not an integer`);
  // While the run goes on and none of its targets failed, one statement counts it (migration 0011):
  // every target job but a run's last. The others close the run or word its error, below.
  if (!atEnd) {
    const { rows } = await db.query<{ advanced: boolean }>(advanceRun, [runId]);
    if (rows[0]?.advanced) return 'running';
  }
  // Two round trips, since a run's close is what `refsync sync` waits for after its last list: the run
  // row's lock, the count from its snapshots (migration 0010) and, while none of its targets failed,
  // the update that counts or closes it, in the BEGIN's; what tells of its end (below) in the COMMIT's.
  // A run with failed lists takes two more between them, for their reasons (run-error.ts) and the
  // update that quotes them.
  return db.transaction(async (tx, opened, atCommit) => {
    const row = opened[0] as (RunCompleted & ProgressRead) | undefined;
    if (!row) throw new Error(`sync run ${runId} does not exist`);
    const { progress, total, done, failed, ...counted } = row;
    if (progress !== 'running') return progress;
    let updated: RunCompleted = counted;
    // Not updated by the opening: a running run is, unless some of its targets failed.
    if (counted.run_id === null) {
      const error = runErrorText(failed ?? 0, total, await runProblems(tx, runId));
      const { rows } = await tx.query<RunCompleted>(updatedRunCompleted(updateRunProgress), [
        runId,
        done ?? 0,
        failed ?? 0,
        cutToBytes(error, RUN_ERROR_BYTES),
      ]);
      updated = rows[0]!;
    }
    if (updated.status !== 'running') for (const statement of runCompletedStatements(updated, source)) atCommit(statement);
    return updated.status as RunStatus;
  }, countAndUpdateRun(runId));
}

/** What countAndUpdateRun reads of a run before it updates it: its status then, its targets, and the count (null unless running). */
interface ProgressRead {
  progress: RunStatus;
  total: number;
  done: number | null;
  failed: number | null;
}

/** Ends a run that could not finish (for example, the database went away mid-run). */
export async function failRun(q: Queryable, runId: number, error: string, source?: SourceConfig): Promise<void> {
  const { rows } = await q.query<RunCompleted>(updatedRunCompleted(failRunningRun), [runId, cutToBytes(error, RUN_ERROR_BYTES)]);
  const failed = rows[0];
  if (!failed) return;
  // In the caller's transaction, if any: sent and written only if it commits.
  for (const statement of runCompletedStatements(failed, source)) await q.query(statement);
}

// Any fixed number: the advisory-lock class of "this process is running run N".
const RUN_LOCK = 7_302_612;
/** Runs alive in this process (PGlite is one session, where advisory locks cannot tell processes apart). */
const liveRuns = new Set<number>();

/**
 * This process's claim on the runs it is running: an advisory lock per run, taken in a transaction
 * left open on one held connection until release. Postgres drops the locks when the process or its
 * connection dies; being transaction-scoped, they stay on one server session even behind a
 * transaction-mode pooler, where a session lock would be taken on one and released on another.
 */
export class RunClaim {
  readonly #conn: Connection;
  readonly #locking: boolean;
  readonly #runs: number[] = [];
  #wrote = false;

  private constructor(conn: Connection, locking: boolean) {
    this.#conn = conn;
    this.#locking = locking;
  }

  /** On PGlite (one session, one process) the claim is the in-process set alone: an open transaction there would hold up every query. */
  static async open(conn: Connection, capabilities: Pick<Capabilities, 'ownSessions'>): Promise<RunClaim> {
    const locking = capabilities.ownSessions;
    if (locking) await conn.begin();
    return new RunClaim(conn, locking);
  }

  async hold(runId: number): Promise<void> {
    liveRuns.add(runId);
    this.#runs.push(runId);
    if (this.#locking) await this.#conn.query('select pg_advisory_xact_lock($1, $2::int)', [RUN_LOCK, runId]);
  }

  /**
   * The claim's own connection as a Database, for work the pool's refused connections could not do
   * (claim-transaction.ts): its writes commit when the claim is released. On PGlite, `db` itself.
   */
  database(db: Database): Database {
    if (!this.#locking) return db;
    this.#wrote = true;
    return insideOpenTransaction(this.#conn, db.kind);
  }

  /** Ends the claim on every run it holds: rolled back (dropping the locks), committed if database() wrote in it. */
  async release(): Promise<void> {
    for (const id of this.#runs) liveRuns.delete(id);
    if (this.#locking) await this.#conn.query(this.#wrote ? 'commit' : 'rollback');
  }
}

/**
 * Fails the source's in-process (`cli`) runs still marked running that no live process holds:
 * their process ended, or lost the database, before it could close them. Worker runs are closed
 * by their own jobs and retries, so they are left alone.
 */
export async function closeAbandonedRuns(db: Database, source: SourceConfig): Promise<number> {
  const { rows } = await db.query<{ id: number }>(runningCliRuns, [source.name]);
  let closed = 0;
  for (const { id } of rows) {
    if (liveRuns.has(Number(id))) continue;
    await db.transaction(async (tx) => {
      const { rows: lock } = await tx.query<{ free: boolean }>('select pg_try_advisory_xact_lock($1, $2::int) as free', [RUN_LOCK, id]);
      if (!lock[0]?.free) return;
      await failRun(tx, Number(id), 'abandoned: the process running it ended before it finished');
      closed += 1;
    });
  }
  return closed;
}

// ── A run's end, told ──
// The end of a run, told to whoever chains work after it (dbt, Airflow): NOTIFY refdata_runs for
// every finished run, and a run_completed alert (outbox, webhook, Slack) when REFSYNC_ALERT_ON
// asks for it. Both carry the run's outcome and its per-list counts.

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
