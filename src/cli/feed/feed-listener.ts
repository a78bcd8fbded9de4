import { ConfigError } from '../../config/errors.ts';
import { listenDatabaseUrlSchema } from '../../config/schema.ts';
import { readSecret } from '../../config/secrets.ts';
import { NotifyListener } from '../../db/notify-listener.ts';
import { silentLogger } from '../../util/logger.ts';

/** How soon a lost LISTEN connection is tried again: the polls go on meanwhile, so only promptness waits. */
const RECONNECT_MS = 2_000;

/**
 * The connection `refsync changes --follow` wakes on: LISTEN refdata_changes (a sync notifies it
 * after a commit that changed a list), on REFSYNC_LISTEN_DATABASE_URL when it names a direct
 * connection (DATABASE_URL may be a transaction-mode pooler, through which LISTEN hears nothing),
 * else on DATABASE_URL; none with REFSYNC_LISTEN_DATABASE_URL=off (the reader only polls). One
 * connection beside the pool's one for reads. Silent: the reader says what a person needs to know
 * about an outage, and polls whether or not this connection is up.
 */
export function startFeedListener(databaseUrl: string, onWake: () => void, env: Record<string, string | undefined> = process.env): NotifyListener | undefined {
  const setting = readSecret('REFSYNC_LISTEN_DATABASE_URL', env.REFSYNC_LISTEN_DATABASE_URL, env.REFSYNC_LISTEN_DATABASE_URL_FILE);
  let url = databaseUrl;
  if (setting) {
    const parsed = listenDatabaseUrlSchema.safeParse(setting);
    if (!parsed.success) throw new ConfigError(`REFSYNC_LISTEN_DATABASE_URL: ${parsed.error.issues.at(-1)?.message ?? 'is not valid'}`);
    if (parsed.data === 'off') return undefined;
    url = parsed.data;
  }
  const listener = new NotifyListener({
    databaseUrl: url,
    channels: ['refdata_changes'],
    applicationName: 'refsync-changes-listen',
    label: 'change feed',
    reconnectMs: RECONNECT_MS,
    logger: silentLogger,
    onWake,
  });
  listener.start();
  return listener;
}
