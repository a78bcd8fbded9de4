import { webhookStatus, type WebhookEndpointStatus } from '../../alerts/status.ts';
import type { AppConfig } from '../../config/types.ts';
import type { Database } from '../../db/database.ts';
import type { QueueSummary } from '../../queue/redis/summary.ts';
import { formatTime } from '../../read/format-time.ts';
import { terminalText } from '../output/terminal.ts';
import { queuePart } from './queue-lines.ts';
import { alertCountsByState } from '../../alerts/outbox-sql.ts';
import { errorLine } from '../../util/error-line.ts';
import { unindexedUsage, unindexedUsageLine, type UnindexedUsage } from '../../impact/usage-index.ts';

export interface StatusExtras {
  queue: QueueSummary | { error: string } | null;
  webhooks: WebhookEndpointStatus[];
  outbox: Record<string, number>;
  /** Usage columns whose impact reads their whole (large) table: no index begins with them. */
  unindexed_usage: UnindexedUsage[];
  lines: string[];
}

/**
 * The queue's state (Redis; see queue-lines.ts), the alert outbox, disabled webhook endpoints and
 * usage columns without an index (src/impact/usage-index.ts). Each part reports its own
 * unavailability in a line rather than failing the whole status.
 */
export async function statusExtras(
  db: Database,
  config: AppConfig | undefined,
  configProblem: string | undefined,
  env: Record<string, string | undefined> = process.env,
): Promise<StatusExtras> {
  const { queue, lines } = await queuePart(config, configProblem, env);
  const { rows } = await db.query<{ state: string; n: number }>(alertCountsByState);
  const outbox = Object.fromEntries(rows.map((r) => [r.state, r.n]));
  lines.push(`alerts: ${rows.length ? rows.map((r) => `${r.n} ${r.state}`).join(', ') : 'none yet'}`);
  const webhooks = await webhookStatus(db);
  for (const w of webhooks.filter((e) => e.disabledAt)) {
    lines.push(`webhook ${terminalText(w.url)} DISABLED since ${formatTime(w.disabledAt)}: ${terminalText(w.reason)} (re-enable with refsync alerts retry ID)`);
  }
  const unindexed = await unindexedUsagePart(db, config, lines);
  return { queue, webhooks, outbox, unindexed_usage: unindexed, lines };
}

/** The usage columns without an index, each as a line; a check that fails says so in a line of its own. */
async function unindexedUsagePart(db: Database, config: AppConfig | undefined, lines: string[]): Promise<UnindexedUsage[]> {
  if (!config) return [];
  try {
    const unindexed = await unindexedUsage(db, config.sources);
    for (const u of unindexed) lines.push(unindexedUsageLine(u));
    return unindexed;
  } catch (err) {
    lines.push(`usage columns: their indexes could not be checked: ${errorLine(err)}`);
    return [];
  }
}
