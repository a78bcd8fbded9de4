import pg from 'pg';
import type { Logger } from '../util/logger.ts';
import { connectionErrorText } from './connection-lost.ts';
import { postgresTls } from './tls.ts';

export interface NotifyListenerOptions {
  databaseUrl: string;
  /** The channels to LISTEN on (names of our own, never user input: they are put in the statement's text). */
  channels: readonly string[];
  /** Shown in pg_stat_activity, so a DBA can tell this session from the pool's. */
  applicationName: string;
  /** Who listens, at the start of log lines ("alert", "change feed"). */
  label: string;
  /** Wait before connecting again after the connection was lost or could not be made. */
  reconnectMs: number;
  logger: Logger;
  /** Called on every notification, and once listening starts (for what was committed before). */
  onWake: () => void;
}

/**
 * A connection of its own that LISTENs, so a loop that would otherwise poll wakes as soon as a sync
 * commits. Losing it costs only promptness: its owner polls until it is back, and it reconnects by
 * itself. One client, never from the pool: a LISTEN must stay on one server session (not through a
 * transaction-mode pooler), and it must not hold one of the pool's connections.
 */
export class NotifyListener {
  readonly #options: NotifyListenerOptions;
  #client: pg.Client | undefined;
  #reconnectTimer: NodeJS.Timeout | undefined;
  #stopping = false;

  constructor(options: NotifyListenerOptions) {
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
    const { logger, label } = this.#options;
    const tls = postgresTls(this.#options.databaseUrl);
    const client = new pg.Client({
      connectionString: tls.connectionString,
      ...(tls.ssl === undefined ? {} : { ssl: tls.ssl }),
      application_name: this.#options.applicationName,
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
      logger.warn({ err: err.message }, `${label} LISTEN connection lost; polling until it is back`);
      retry();
    });
    client.on('end', () => {
      if (!this.#stopping) retry();
    });
    client.on('notification', () => this.#options.onWake());
    this.#client = client;
    try {
      await client.connect();
      await client.query(this.#options.channels.map((channel) => `LISTEN ${channel}`).join('; '));
      if (this.#stopping) await client.end().catch(() => undefined);
      // Anything committed while we were not listening is found by the read this triggers.
      else this.#options.onWake();
    } catch (err) {
      logger.warn({ err: connectionErrorText(err) }, `${label} LISTEN failed; polling until it works`);
      retry();
    }
  }
}
