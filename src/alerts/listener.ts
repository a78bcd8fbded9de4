import pg from 'pg';
import { postgresTls } from '../db/tls.ts';
import type { Logger } from '../util/logger.ts';
import { errorMessage } from './delivery.ts';
import { ALERT_CHANNEL } from './outbox.ts';

export interface OutboxListenerOptions {
  databaseUrl: string;
  /** Wait before connecting again after the connection was lost or could not be made. */
  reconnectMs: number;
  logger: Logger;
  /** Called on every notification, and once listening starts (for what was committed before). */
  onWake: () => void;
}

/**
 * A connection of its own that LISTENs to refdata_changes and refdata_alerts, so the dispatcher
 * wakes as soon as a sync commits. Losing it costs only promptness: the dispatcher polls until it
 * is back, and it reconnects by itself.
 */
export class OutboxListener {
  readonly #options: OutboxListenerOptions;
  #client: pg.Client | undefined;
  #reconnectTimer: NodeJS.Timeout | undefined;
  #stopping = false;

  constructor(options: OutboxListenerOptions) {
    this.#options = options;
  }

  start(): void {
    void this.#listen();
  }

  /** Stops reconnecting at once, then closes the connection. */
  async stop(): Promise<void> {
    this.#stopping = true;
    clearTimeout(this.#reconnectTimer);
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => undefined);
  }

  async #listen(): Promise<void> {
    if (this.#stopping) return;
    const { logger } = this.#options;
    const tls = postgresTls(this.#options.databaseUrl);
    const client = new pg.Client({
      connectionString: tls.connectionString,
      ...(tls.ssl === undefined ? {} : { ssl: tls.ssl }),
      application_name: 'refsync-alerts-listen',
    });
    const retry = () => {
      if (this.#client !== client) return;
      this.#client = undefined;
      client.end().catch(() => undefined);
      if (!this.#stopping && !this.#reconnectTimer) {
        this.#reconnectTimer = setTimeout(() => {
          this.#reconnectTimer = undefined;
          void this.#listen();
        }, this.#options.reconnectMs);
      }
    };
    client.on('error', (err) => {
      logger.warn({ err: err.message }, 'alert LISTEN connection lost; polling until it is back');
      retry();
    });
    client.on('end', () => {
      if (!this.#stopping) retry();
    });
    client.on('notification', () => this.#options.onWake());
    this.#client = client;
    try {
      await client.connect();
      await client.query(`LISTEN refdata_changes; LISTEN ${ALERT_CHANNEL}`);
      if (this.#stopping) await client.end().catch(() => undefined);
      // Anything committed while we were not listening is found by the drain this triggers.
      else this.#options.onWake();
    } catch (err) {
      logger.warn({ err: errorMessage(err) }, 'alert LISTEN failed; polling until it works');
      retry();
    }
  }
}
