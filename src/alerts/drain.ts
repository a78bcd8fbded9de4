import { alertLog, type AlertLog } from './alert-log.ts';
import { errorMessage } from './delivery.ts';
import { dispatchAlert } from './dispatch-alert.ts';
import type { DispatchContext, DrainResult, Outcome } from './dispatch-context.ts';
import type { AlertRow } from './format.ts';
import { claimDue, disabledEndpoints } from './outbox-sql.ts';

/** The environments whose alerts this dispatcher delivers, and the labels of their webhooks. */
export interface DrainScope {
  environments: string[];
  labels: string[];
}

/**
 * Delivers every alert due now once, a batch at a time: claim (leased, so no other worker takes
 * them), dispatch each (deliver, then record the result), then report each outcome.
 */
export async function drainDue(ctx: DispatchContext, scope: DrainScope, report: (row: AlertRow, outcome: Outcome) => void): Promise<DrainResult> {
  const { db, settings } = ctx;
  const result: DrainResult = { delivered: 0, failed: 0, dead: 0, skipped: 0, disabled: 0 };
  if (scope.environments.length === 0) return result;
  await ctx.clock.measure();
  // Only what is due now: an alert that fails is rescheduled past the cutoff, so it is not
  // retried within this call however small the backoff. The cutoff is read, not estimated: an
  // alert requeued a moment ago by another process must count as due, and the estimate can lag
  // the database's clock by a round trip.
  const { rows: clock } = await db.query<{ now: Date }>('select clock_timestamp() as now');
  const cutoff = new Date(clock[0]!.now);
  const disabled = await disabledEndpoints(db, scope.labels);
  // One log for the whole drain, so failed alerts with one cause are one line across its batches.
  const log = alertLog(ctx.logger);
  try {
    for (;;) {
      const lease = new Date(ctx.clock.now() + settings.leaseMs);
      const rows = await claimDue(db, cutoff, lease, scope.environments, settings.batchSize);
      if (rows.length === 0) break;
      const outcomes = await Promise.all(rows.map((row) => dispatchClaimed(ctx, row, lease, disabled, log)));
      outcomes.forEach((outcome, i) => {
        result[outcome]++;
        report(rows[i]!, outcome);
      });
      if (rows.length < settings.batchSize) break;
    }
  } finally {
    log.flush();
  }
  return result;
}

function dispatchClaimed(ctx: DispatchContext, row: AlertRow, lease: Date, disabled: Map<string, string>, log: AlertLog): Promise<Outcome> {
  return dispatchAlert(ctx, row, lease, disabled, log).catch((err: unknown) => {
    // A database error while recording: the lease expires and the alert is taken again.
    ctx.logger.error({ alertId: Number(row.id), err: errorMessage(err) }, 'alert dispatch failed');
    return 'failed' as const;
  });
}
