import { createAlertDispatcher, type AlertEvent } from '../../alerts/dispatcher.ts';
import type { AppConfig } from '../../config/types.ts';
import type { Database } from '../../db/database.ts';
import type { Logger } from '../../util/logger.ts';

export interface AlertDelivery {
  /** Delivers what is due (webhook, Slack, logs). A failure stays queued in the outbox for a retry. */
  deliver(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The alert delivery of a one-shot command. Created before the sync, so a bad webhook setting
 * fails (exit 2) before anything is written; a delivery failure never fails the sync.
 */
export function openAlertDelivery(
  db: Database,
  config: AppConfig,
  logger: Logger,
  extra: { ca?: string; onAlert?: (event: AlertEvent) => void } = {},
): AlertDelivery {
  const dispatcher = createAlertDispatcher({ db, config, logger, listen: false, ...extra });
  return {
    async deliver() {
      try {
        await dispatcher.drainOnce();
      } catch (err) {
        logger.warn({ err: (err as Error).message }, 'alert delivery failed; the alerts stay queued in refdata.alerts');
      }
    },
    close: () => dispatcher.stop(),
  };
}
