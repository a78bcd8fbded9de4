// refsync alerts [--pending] [--json] [--limit N]  |  refsync alerts retry ID [ID ...]
import { endpointLabel, webhookId } from '../../alerts/endpoint.ts';
import { alertFromRow, shortSummary, type AlertRow } from '../../alerts/format.ts';
import { loadConfig } from '../../config/load.ts';
import type { Database } from '../../db/database.ts';
import { parseCommandArgs, UsageError } from '../args.ts';
import { databaseUrlFromEnv, openCliDatabase } from '../database.ts';
import { formatTable } from '../output/table.ts';
import { jsonText, shorten, terminalText } from '../output/terminal.ts';
import { alertList, alertState, enableEndpoint, requeueAlert } from '../../alerts/outbox-sql.ts';

interface AlertListRow extends AlertRow {
  delivered_at: Date | null;
  next_attempt_at: Date;
  last_error: string | null;
  state: string;
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

async function list(db: Database, pending: boolean, json: boolean, limit: number): Promise<number> {
  const { rows } = await db.query<AlertListRow>(alertList, [pending, limit]);
  const items = rows.map((row) => {
    const alert = alertFromRow(row);
    return {
      id: alert.id,
      createdAt: iso(row.created_at),
      kind: row.kind,
      environment: row.environment,
      listKey: row.list_key,
      variant: row.variant,
      state: row.state,
      attempts: row.attempts,
      lastError: row.last_error,
      deliveredAt: iso(row.delivered_at),
      nextAttemptAt: row.state === 'pending' ? iso(row.next_attempt_at) : null,
      webhookId: webhookId(alert),
      snapshotId: alert.snapshotId,
      runId: alert.runId,
      summary: shortSummary(alert),
    };
  });
  if (json) {
    process.stdout.write(`${jsonText(items)}\n`);
    return 0;
  }
  if (items.length === 0) {
    process.stdout.write(pending ? 'no pending alerts\n' : 'no alerts\n');
    return 0;
  }
  const cells = items.map((a) => [
    a.id,
    (a.createdAt ?? '').replace('T', ' ').slice(0, 19),
    a.kind,
    [a.environment, a.listKey, a.variant].filter(Boolean).join('/'),
    a.state,
    a.attempts,
    shorten(a.summary, 40),
    a.lastError === null ? null : shorten(a.lastError, 80),
  ]);
  process.stdout.write(`${formatTable(['id', 'created', 'kind', 'target', 'state', 'attempts', 'summary', 'last error'], cells)}\n`);
  return 0;
}

/** What `alerts retry` requeues: given up on, stopped by a 410, or sent (or only logged) already: a replay. */
const REQUEUED_STATES = ['dead', 'disabled', 'delivered', 'skipped'];

/**
 * Requeues alerts that are not pending: pending, due now, a fresh attempt count. A delivered (or
 * skipped: logged only, no webhook then) alert is replayed with its webhook-id, for a receiver
 * that lost it or a webhook configured since; a receiver that deduplicates by the id keeps one
 * copy. Retrying a disabled
 * alert is the operator saying its endpoint is back, so the endpoint is re-enabled too (that needs
 * the configuration, to know which endpoint the alert's source uses); the endpoint's other
 * disabled alerts stay as they are until retried.
 */
async function retry(db: Database, ids: number[]): Promise<number> {
  let code = 0;
  let endpoints: Map<string, string> | undefined;
  for (const id of ids) {
    const { rows } = await db.query<{ state: string; environment: string }>(alertState, [id]);
    const row = rows[0];
    if (!row) {
      process.stderr.write(`refsync: alerts retry: alert ${id} does not exist\n`);
      code = 2;
      continue;
    }
    if (!REQUEUED_STATES.includes(row.state)) {
      process.stderr.write(`refsync: alerts retry: alert ${id} is ${row.state}: it is queued already\n`);
      code = 2;
      continue;
    }
    if (row.state === 'disabled') {
      endpoints ??= new Map(loadConfig().sources.flatMap((s) => (s.webhook ? [[s.environment, endpointLabel(s.webhook.url)] as [string, string]] : [])));
      const label = endpoints.get(row.environment);
      if (label) {
        const { affectedRows } = await db.query(enableEndpoint, [label, `re-enabled by refsync alerts retry ${id}`]);
        if (affectedRows) process.stdout.write(`webhook endpoint ${terminalText(label)} re-enabled\n`);
      }
    }
    await db.query(requeueAlert, [id, REQUEUED_STATES]);
    process.stdout.write(`alert ${id} requeued (was ${row.state})\n`);
  }
  return code;
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('alerts', argv, true);
  let ids: number[] | undefined;
  if (positionals.length > 0) {
    if (positionals[0] !== 'retry') throw new UsageError(`alerts: unknown argument '${positionals[0]}' (usage: alerts [--pending] [--json] | alerts retry ID)`);
    ids = positionals.slice(1).map((p) => {
      if (!/^\d+$/.test(p)) throw new UsageError(`alerts retry: '${p}' is not an alert id`);
      return Number(p);
    });
    if (ids.length === 0) throw new UsageError('alerts retry: give the id of the alert to requeue');
  }
  const limit = values.limit === undefined ? 50 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new UsageError(`alerts: --limit must be a whole number from 1 to 10000`);

  // Only DATABASE_URL is needed: listing alerts works without the upstream's credentials.
  const db = await openCliDatabase({ databaseUrl: databaseUrlFromEnv(), readOnly: true });
  try {
    return ids ? await retry(db, ids) : await list(db, values.pending, values.json, limit);
  } finally {
    await db.close();
  }
}
