// A running worker's side of the schema handshake (docs/production.md, "Upgrading"): a newer
// refsync may migrate the database while this worker runs (a rolling deploy). From then on this
// worker's code may no longer fit the schema, so it stops: graphile-worker does the same
// (its PRs 360/361), here by looking at drizzle.__drizzle_migrations rather than by a NOTIFY.
import type { Database } from '../../db/database.ts';
import { checkMigratedSchema, type SchemaCheck } from '../../db/schema-version.ts';
import { errorLine } from '../../util/error-line.ts';
import type { Logger } from '../../util/logger.ts';

/** How often a running worker looks for a newer migration by default (the contract's bound: 60 s). */
export const DEFAULT_SCHEMA_CHECK_INTERVAL_MS = 60_000;

export interface SchemaWatchOptions {
  db: Database;
  intervalMs: number;
  logger: Logger;
  /** Called once, when a newer migration is first seen: the worker stops taking jobs and exits. */
  onNewer(check: SchemaCheck): void;
}

export interface SchemaWatch {
  /** Looks now (before each run job); true once the database is known to be ahead. */
  newerSchema(): Promise<boolean>;
  /** Starts the periodic look. */
  start(): void;
  close(): Promise<void>;
}

export function createSchemaWatch(options: SchemaWatchOptions): SchemaWatch {
  const { db, logger } = options;
  let newer = false;
  let timer: NodeJS.Timeout | undefined;

  async function newerSchema(): Promise<boolean> {
    if (newer) return true;
    // A restored database starts a new change feed epoch before the run job writes (feed-epoch.ts).
    const check = await checkMigratedSchema(db, { followRestore: true });
    if (check.state !== 'ahead' || newer) return newer;
    newer = true;
    logger.error(
      { databaseSchemaVersion: check.database, shippedSchemaVersion: check.shipped },
      `the database was migrated by a newer refsync (database schema version ${check.database}, this worker ships schema version ${check.shipped}): this worker stops taking jobs, lets the ones it holds finish and exits`,
    );
    options.onNewer(check);
    return true;
  }

  return {
    newerSchema,
    start() {
      let checking = false;
      timer = setInterval(() => {
        if (checking || newer) return;
        checking = true;
        newerSchema()
          .catch((err) => logger.warn({ err: errorLine(err) }, 'schema version check failed'))
          .finally(() => {
            checking = false;
          });
      }, options.intervalMs);
      timer.unref();
    },
    async close() {
      clearInterval(timer);
    },
  };
}
