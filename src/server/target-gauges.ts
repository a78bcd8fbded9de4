import { Gauge, type Registry } from 'prom-client';
import type { Logger } from '../util/logger.ts';

/** What identifies a target in a row of a per-target query. */
export interface TargetRow {
  environment: string;
  list_key: string;
  variant: string;
}

/** A label besides source, list and variant, with its value per row. */
export interface ExtraLabel<R> {
  name: string;
  value: (row: R) => string;
}

export type TargetGauge<R> = (name: string, help: string, value: (row: R) => number | null, reportErrors: boolean, extra?: ExtraLabel<R>) => void;

/**
 * Makes gauges labelled by target (source, list, variant) that share one query per scrape:
 * prom-client awaits each collect in turn, so the first gauge runs the query and the others of the
 * same scrape reuse its answer. Targets of environments no configured source has are left out, as
 * are null values. A failed query keeps the series of the last one, so rules on them still see
 * them. With reportErrors false a gauge stays silent on a failed query (one report per query is enough).
 */
export function targetGauges<R extends TargetRow>(
  registry: Registry,
  sourceOf: ReadonlyMap<string, string>,
  log: Logger,
  query: () => Promise<R[]>,
): TargetGauge<R> {
  let pending: Promise<R[]> | undefined;
  const rows = () => {
    pending ??= query().finally(() => setTimeout(() => (pending = undefined), 0));
    return pending;
  };
  return (name, help, value, reportErrors, extra) => {
    new Gauge({
      name,
      help,
      labelNames: extra ? ['source', 'list', 'variant', extra.name] : ['source', 'list', 'variant'],
      registers: [registry],
      async collect() {
        try {
          const read = await rows();
          // Reset only once read: a failed read keeps the last values (refsync_database_read_timestamp_seconds says how old).
          this.reset();
          for (const row of read) {
            const source = sourceOf.get(row.environment);
            const v = value(row);
            if (!source || v === null) continue;
            const labels: Record<string, string> = { source, list: row.list_key, variant: row.variant };
            if (extra) labels[extra.name] = extra.value(row);
            this.set(labels, v);
          }
        } catch (err) {
          if (reportErrors) log.debug({ err: (err as Error).message }, `metrics: ${name} unavailable`);
        }
      },
    });
  };
}
