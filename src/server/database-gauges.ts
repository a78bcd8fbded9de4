// Whether Postgres gives refsync connections, and how fresh the gauges read from it are. When the
// server refuses new connections (its max_connections taken by other applications, a restart), the
// per-target gauges keep their last values rather than vanish, so an alert on them still fires on
// what it last knew; these two say that Postgres refuses, and since when the values are stale.
import { Gauge, type Registry } from 'prom-client';

export interface DatabaseGauges {
  /** Wraps a read of the gauges from Postgres: a success moves the read timestamp. */
  tracked<T>(read: () => Promise<T>): () => Promise<T>;
}

/**
 * refsync_database_up (1 while the pool gives a working connection: `probe`, shared with /readyz) and
 * refsync_database_read_timestamp_seconds (when the gauges' last read of Postgres succeeded).
 */
export function registerDatabaseGauges(registry: Registry, probe: () => Promise<void>): DatabaseGauges {
  let lastRead: number | undefined;
  new Gauge({
    name: 'refsync_database_up',
    help: '1 while this worker gets a working Postgres connection from its pool, 0 while the server refuses (connection limit, restart) or does not answer.',
    registers: [registry],
    async collect() {
      this.set(
        await probe().then(
          () => 1,
          () => 0,
        ),
      );
    },
  });
  new Gauge({
    name: 'refsync_database_read_timestamp_seconds',
    help: 'When the gauges read from Postgres last read it (unix time); while reads fail they keep their last values, which are then this old.',
    registers: [registry],
    collect() {
      if (lastRead !== undefined) this.set(lastRead);
    },
  });
  return {
    tracked: (read) => async () => {
      const result = await read();
      lastRead = Date.now() / 1000;
      return result;
    },
  };
}
