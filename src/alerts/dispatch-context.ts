import type { Database } from '../db/database.ts';
import type { Logger } from '../util/logger.ts';
import type { DatabaseClock } from './database-clock.ts';
import type { DispatcherSettings } from './dispatcher-settings.ts';
import type { Channel } from './webhooks.ts';

export interface DrainResult {
  delivered: number;
  /** Attempts that failed and were scheduled again. */
  failed: number;
  /** Alerts given up on after the last attempt. */
  dead: number;
  /** Alerts of sources without a webhook: logged only. */
  skipped: number;
  /** Alerts not sent because their endpoint answered 410 Gone. */
  disabled: number;
}

/** What became of one claimed alert. */
export type Outcome = keyof DrainResult;

/** What every step of a dispatch needs: where to record, what time it is, where alerts go. */
export interface DispatchContext {
  db: Database;
  logger: Logger;
  settings: DispatcherSettings;
  clock: DatabaseClock;
  /** Each environment's channel. */
  channels: Map<string, Channel>;
}
