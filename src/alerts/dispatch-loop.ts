import type { Logger } from '../util/logger.ts';
import { Wakeup } from '../util/wakeup.ts';
import { errorMessage } from './delivery.ts';
import type { DrainResult } from './dispatch-context.ts';
import { NotifyListener } from '../db/notify-listener.ts';
import { ALERT_CHANNEL } from './outbox-sql.ts';

export interface DispatchLoopOptions {
  drain: () => Promise<DrainResult>;
  /** How long to sleep after a drain: until the next due alert, at most the poll interval. */
  millisUntilNextDue: () => Promise<number>;
  pollIntervalMs: number;
  logger: Logger;
}

/**
 * The dispatcher's continuous loop: drain, then sleep until the next due alert, the poll interval,
 * or a NOTIFY on the LISTEN connection (when given one), whichever comes first. A wake-up that
 * comes during a drain is not lost: the loop drains again at once.
 */
export class DispatchLoop {
  readonly #options: DispatchLoopOptions;
  #running: Promise<void> | undefined;
  #stopping = false;
  #stopped: Promise<void> | undefined;
  readonly #wakeup = new Wakeup();
  #listener: NotifyListener | undefined;

  constructor(options: DispatchLoopOptions) {
    this.#options = options;
  }

  /** Starts the loop, and a listener on the URL `listenUrl` gives, if any. Does nothing once started or stopped. */
  start(listenUrl: () => string | undefined): void {
    if (this.#running || this.#stopping) return;
    const url = listenUrl();
    if (url) {
      const reconnectMs = Math.min(this.#options.pollIntervalMs, 5_000);
      this.#listener = new NotifyListener({
        databaseUrl: url,
        channels: ['refdata_changes', ALERT_CHANNEL],
        applicationName: 'refsync-alerts-listen',
        label: 'alert',
        reconnectMs,
        logger: this.#options.logger,
        onWake: () => this.#wakeup.wake(),
      });
      this.#listener.start();
    }
    this.#running = this.#loop();
  }

  /** Stops the loop and the listener; waits for the drain in flight. Idempotent. */
  stop(): Promise<void> {
    this.#stopped ??= (async () => {
      this.#stopping = true;
      const listenerStopped = this.#listener?.stop();
      this.#wakeup.wake();
      await this.#running?.catch(() => undefined);
      await listenerStopped;
    })();
    return this.#stopped;
  }

  async #loop(): Promise<void> {
    const { drain, logger, pollIntervalMs } = this.#options;
    while (!this.#stopping) {
      let wait = pollIntervalMs;
      try {
        const r = await drain();
        if (r.delivered + r.failed + r.dead + r.skipped + r.disabled > 0) logger.debug({ ...r }, 'alert outbox drained');
        wait = await this.#options.millisUntilNextDue();
      } catch (err) {
        logger.error({ err: errorMessage(err) }, 'alert outbox drain failed; will try again');
      }
      if (this.#stopping) continue;
      // A wake-up during the drain returns at once: the loop drains again.
      await this.#wakeup.sleep(wait);
    }
  }
}
