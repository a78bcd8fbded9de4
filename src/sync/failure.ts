import type { Target } from '../catalog/targets.ts';
import type { Database, Queryable } from '../db/database.ts';
import { wantsAlert, writeAlert } from '../alerts/outbox.ts';
import { UpstreamError } from '../upstream/errors.ts';
import { DuplicateKeyError } from './content-hash.ts';
import { EntryLimitError } from './entry-limits.ts';
import { EntryShapeError } from './normalize.ts';
import { ViewDependencyError } from '../columns/list-views.ts';
import { alertFor } from '../alerts/alert-row.ts';
import { storableText } from './storable-text.ts';
import { previousSnapshots } from './previous.ts';
import { insertSnapshot, targetIs, targetParams } from './sql.ts';
import { lockTarget } from './target-lock.ts';
import { zeroCounts } from './apply-types.ts';

/** Postgres refused what one list's data asked it to store: that list fails, not the run. */
export class DataRefusedError extends Error {
  readonly code: string;
  readonly sqlstate: string;

  constructor(listKey: string, sqlstate: string, reason: string) {
    super(`${listKey}: Postgres refused the list's data: ${reason.split('\n')[0]!.slice(0, 300)} (SQLSTATE ${sqlstate})`);
    this.code = `sqlstate_${sqlstate}`;
    this.sqlstate = sqlstate;
  }
}

/**
 * SQLSTATE classes the data of one list can provoke: 22 data exception (a value Postgres cannot
 * hold), 23 integrity constraint violation, 54 program limit exceeded (an index row too large).
 * Everything else (08 connection, 57 operator intervention, 53 resources, 40 rollback...) is the
 * database's state, not the list's, and is retried as an outage.
 */
const dataSqlstate = /^(?:22|23|54)[0-9A-Z]{3}$/;

function sqlstateOf(err: unknown): string | undefined {
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' && dataSqlstate.test(code) ? code : undefined;
}

/**
 * The one place that decides whether an error is the list's failure: the list failures proper
 * (service, answer, data shape, limits) as they are, and a Postgres error caused by the list's
 * data as a DataRefusedError. Undefined for anything else (a database outage, a bug).
 */
export function listFailureOf(err: unknown, listKey: string): (Error & { code: string }) | undefined {
  if (isListFailure(err)) return err;
  const sqlstate = sqlstateOf(err);
  return sqlstate ? new DataRefusedError(listKey, sqlstate, (err as Error).message) : undefined;
}

/** Failures that belong to one list (the service, its answer, its data, its views): recorded, never thrown. */
export function isListFailure(err: unknown): err is Error & { code: string } {
  return (
    err instanceof UpstreamError ||
    err instanceof DuplicateKeyError ||
    err instanceof EntryShapeError ||
    err instanceof EntryLimitError ||
    err instanceof DataRefusedError ||
    err instanceof ViewDependencyError
  );
}

/** A list the service does not serve here (404): recorded as unavailable rather than failed. */
export function isUnavailable(err: unknown): boolean {
  return err instanceof UpstreamError && err.code === 'http_status' && err.status === 404;
}

/**
 * Records a failed (or unavailable) fetch as a snapshot row and, when the target was not already
 * failing, a `failed` alert. The target's entries are not touched: its last good data stays current.
 */
export async function recordFailure(
  db: Database,
  target: Target,
  runId: number | null,
  err: Error & { code?: string },
  durationMs: number,
): Promise<number> {
  return (await recordFailureUnlessDone(db, target, runId, err, durationMs, false))!;
}

/** Whether the run already has a snapshot of the target (it ran to the end, ok or not). */
export async function syncedInRun(q: Queryable, runId: number, target: Target): Promise<boolean> {
  const { rows } = await q.query(
    `select 1 from refdata.snapshots where run_id = $1 and ${targetIs('', 2)} limit 1`,
    [runId, ...targetParams(target)],
  );
  return rows.length > 0;
}

/**
 * recordFailure for a sweep that may race other workers: records nothing (and returns undefined)
 * when the run already has a snapshot of the target, checked under the target's lock.
 */
export async function recordFailureUnlessDone(
  db: Database,
  target: Target,
  runId: number | null,
  err: Error & { code?: string },
  durationMs: number,
  checkDone = true,
): Promise<number | undefined> {
  const env = target.source.environment;
  const listKey = target.list.key;
  const status = isUnavailable(err) ? 'unavailable' : 'failed';
  // Storable even when the error quotes the data that Postgres refused.
  const message = storableText(err.message.split('\n')[0]!.slice(0, 1000));
  return db.transaction(async (tx) => {
    await lockTarget(tx, env, listKey, target.variant);
    if (checkDone && runId !== null && (await syncedInRun(tx, runId, target))) return undefined;
    const { last } = await previousSnapshots(tx, env, listKey, target.variant);
    const snapshotId = await insertSnapshot(tx, target, {
      runId,
      status,
      changed: false,
      counts: zeroCounts(),
      contentHash: null,
      entryCount: null,
      fields: null,
      pages: null,
      durationMs,
      replacedValues: 0,
      error: message,
      errorCode: err.code ?? 'error',
    });
    const alreadyFailing = last?.status === status;
    if (!alreadyFailing && wantsAlert(target.source, 'failed', listKey)) {
      await writeAlert(
        tx,
        alertFor(target, 'failed', snapshotId, { status, error_code: err.code ?? 'error', error: message }),
      );
    }
    return snapshotId;
  });
}
