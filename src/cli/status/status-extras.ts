import { webhookStatus, type WebhookEndpointStatus } from '../../alerts/status.ts';
import type { AppConfig } from '../../config/types.ts';
import type { Database } from '../../db/database.ts';
import type { QueueSummary } from '../../queue/redis/summary.ts';
import { formatTime } from '../../read/format-time.ts';
import { terminalText } from '../output/terminal.ts';
import { queuePart } from './queue-lines.ts';
import { alertCountsByState } from '../../alerts/outbox-sql.ts';

export interface StatusExtras {
  queue: QueueSummary | { error: string } | null;
  webhooks: WebhookEndpointStatus[];
  outbox: Record<string, number>;
  lines: string[];
}

/**
 * The queue's state (Redis; see queue-lines.ts), the alert outbox and disabled webhook endpoints.
 * Each part reports its own unavailability in a line rather than failing the whole status.
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
  return { queue, webhooks, outbox, lines };
}
