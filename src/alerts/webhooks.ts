import type { Agent } from 'undici';
import { ConfigError } from '../config/errors.ts';
import type { SourceConfig, WebhookFormat } from '../config/types.ts';
import { badSecretRefusal, plainHttpRefusal } from '../config/webhook-refusals.ts';
import { endpointLabel } from './endpoint.ts';
import { webhookKey } from './sign.ts';
import { createWebhookAgent } from './transport.ts';

export interface Webhook {
  url: URL;
  /** The URL as logs, errors and tables may name it (no path: it may hold a credential). */
  label: string;
  format: WebhookFormat;
  key?: Buffer;
  agent: Agent;
}

/** Where a source's alerts go: its webhook, or only the log. */
export interface Channel {
  source: SourceConfig;
  webhook?: Webhook;
}

/** A source's webhook, checked: a URL, https (http only when private targets are allowed), no user info, a valid secret. */
function buildWebhook(source: SourceConfig, agents: (allowPrivate: boolean) => Agent): Webhook | undefined {
  const config = source.webhook;
  if (!config) return undefined;
  let url: URL;
  try {
    url = new URL(config.url);
  } catch {
    throw new ConfigError(`REFSYNC_WEBHOOK_URL (source ${source.name}): is not a URL`);
  }
  const label = endpointLabel(url.href);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && config.allowPrivate)) {
    throw new ConfigError(`REFSYNC_WEBHOOK_URL (source ${source.name}): ${label} ${plainHttpRefusal('REFSYNC_WEBHOOK_ALLOW_PRIVATE')}`);
  }
  if (url.username || url.password) {
    throw new ConfigError(`REFSYNC_WEBHOOK_URL (source ${source.name}): must not carry user info`);
  }
  const webhook: Webhook = { url, label, format: config.format, agent: agents(config.allowPrivate) };
  if (config.secret !== undefined) {
    const key = webhookKey(config.secret);
    if (!key) {
      throw new ConfigError(`REFSYNC_WEBHOOK_SECRET (source ${source.name}): ${badSecretRefusal}`);
    }
    webhook.key = key;
  }
  return webhook;
}

/**
 * The channel of every source by environment, with at most two HTTP agents shared by all webhooks:
 * one that may reach private addresses and one that may not.
 */
export function webhookChannels(
  sources: readonly SourceConfig[],
  agent: { ca: string[]; timeoutMs: number },
): { channels: Map<string, Channel>; close(): Promise<void> } {
  const agentByMode = new Map<boolean, Agent>();
  const agentFor = (allowPrivate: boolean): Agent => {
    let found = agentByMode.get(allowPrivate);
    if (!found) {
      const connectMs = Math.min(10_000, agent.timeoutMs);
      found = createWebhookAgent({ allowPrivate, ca: agent.ca, timeouts: { connectMs, headersMs: agent.timeoutMs, bodyMs: agent.timeoutMs } });
      agentByMode.set(allowPrivate, found);
    }
    return found;
  };
  const channels = new Map<string, Channel>();
  for (const source of sources) {
    const channel: Channel = { source };
    const webhook = buildWebhook(source, agentFor);
    if (webhook) channel.webhook = webhook;
    channels.set(source.environment, channel);
  }
  return {
    channels,
    async close() {
      await Promise.all([...agentByMode.values()].map((a) => a.close().catch(() => a.destroy())));
    },
  };
}
