import { webhookStatus, type WebhookEndpointStatus } from '../../alerts/status.ts';
import type { AppConfig } from '../../config/types.ts';
import type { Database } from '../../db/database.ts';
import { queueSummary, type QueueSummary } from '../../queue/redis/summary.ts';
import { formatTime } from '../../read/format-time.ts';
import { terminalText } from '../output/terminal.ts';

export interface StatusExtras {
  queue: QueueSummary | { error: string } | null;
  webhooks: WebhookEndpointStatus[];
  outbox: Record<string, number>;
  lines: string[];
}

/**
 * The queue's state (Redis), the alert outbox and disabled webhook endpoints. Each part reports
 * its own unavailability in a line rather than failing the whole status.
 */
export async function statusExtras(db: Database, config: AppConfig | undefined, configProblem: string | undefined): Promise<StatusExtras> {
  const lines: string[] = [];
  let queue: StatusExtras['queue'] = null;
  if (!config) {
    lines.push(`queue: not shown (configuration incomplete: ${terminalText(configProblem ?? 'unknown')})`);
  } else {
    try {
      queue = await queueSummary(config);
      const c = queue.counts;
      lines.push(`queue: ${c.wait ?? 0} waiting, ${c.active ?? 0} active, ${c.delayed ?? 0} delayed, ${c.failed ?? 0} failed, ${c.completed ?? 0} completed`);
      for (const s of queue.schedulers) lines.push(`  schedule ${s.source}: '${s.pattern}' (${s.tz}), next ${s.next ? formatTime(s.next) : 'none'}`);
      if (queue.schedulers.length === 0) lines.push('  no schedules installed (start `refsync worker`)');
    } catch (err) {
      const message = (err as Error).message.split('\n')[0] ?? 'unreachable';
      queue = { error: message };
      lines.push(`queue: unavailable (${terminalText(message)})`);
    }
  }
  const { rows } = await db.query<{ state: string; n: number }>('select state, count(*)::int as n from refdata.alerts group by state');
  const outbox = Object.fromEntries(rows.map((r) => [r.state, r.n]));
  lines.push(`alerts: ${rows.length ? rows.map((r) => `${r.n} ${r.state}`).join(', ') : 'none yet'}`);
  const webhooks = await webhookStatus(db);
  for (const w of webhooks.filter((e) => e.disabledAt)) {
    lines.push(`webhook ${terminalText(w.url)} DISABLED since ${formatTime(w.disabledAt)}: ${terminalText(w.reason)} (re-enable with refsync alerts retry ID)`);
  }
  return { queue, webhooks, outbox, lines };
}
