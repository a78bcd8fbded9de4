// Gauges for operators' alert rules and dashboards (deploy/prometheus, deploy/grafana): which build
// runs, and which targets need a human. The per-target ones are read from Postgres at scrape time,
// so every worker reports the same values (take max over workers).
import { Gauge, type Registry } from 'prom-client';
import type { Queryable } from '../db/database.ts';
import type { Logger } from '../util/logger.ts';
import { packageVersion } from '../util/package-version.ts';
import { targetGauges } from './target-gauges.ts';
import { targetHealth, type TargetHealthRow } from '../read/target-health.ts';
import { readFeedHoldback } from '../read/change-feed-holdback.ts';

export function registerBuildInfo(registry: Registry): void {
  new Gauge({
    name: 'refsync_build_info',
    help: 'Always 1; the labels say which refsync version runs on which Node.js.',
    labelNames: ['version', 'node'],
    registers: [registry],
  }).set({ version: packageVersion, node: process.version }, 1);
}

/** refsync_list_held and refsync_list_consecutive_failures, labelled by configured source name. */
export function registerTargetHealthGauges(registry: Registry, db: Queryable, sourceOf: ReadonlyMap<string, string>, log: Logger): void {
  const gauge = targetGauges<TargetHealthRow>(registry, sourceOf, log, () => targetHealth(db));
  gauge(
    'refsync_list_held',
    '1 while the latest snapshot of the target is held, waiting for a human; reason: schema (its schema policy, accept with --accept-schema) or removals (a mass removal, accept with --accept-removals).',
    (r) => (r.held ? 1 : 0),
    true,
    { name: 'reason', value: (r) => r.held_reason ?? '' },
  );
  // Errors are reported once, by the gauge above.
  gauge(
    'refsync_list_consecutive_failures',
    'Failed or unavailable snapshots of the target in a row since its last ok one.',
    (r) => r.consecutive_failures,
    false,
  );
}

/**
 * refsync_change_feed_held_seconds: how long the oldest open write transaction in the database has
 * held the change feed back (0 when none is open, NaN when its start is hidden). Read at scrape
 * time, the same on every worker; a failed read keeps the last value and says so at debug level,
 * like the outbox gauge.
 */
export function registerFeedHoldbackGauge(registry: Registry, db: Queryable, log: Logger): void {
  new Gauge({
    name: 'refsync_change_feed_held_seconds',
    help: 'How long the change feed (refdata.change_feed) has been held back by the oldest open write transaction in the database cluster; 0 when none is open, NaN when the role of refsync may not see its start (grant it pg_read_all_stats). See select * from refdata.change_feed_held().',
    registers: [registry],
    async collect() {
      try {
        // NaN, not 0, for a hold whose start the owner of refdata may not see: held, for how long unknown.
        this.set((await readFeedHoldback(db)).held_seconds ?? Number.NaN);
      } catch (err) {
        log.debug({ err: (err as Error).message }, 'metrics: change feed hold unavailable');
      }
    },
  });
}
