import { listVariant, type Target } from '../../catalog/catalog.ts';
import type { Database } from '../../db/database.ts';
import type { Logger } from '../../util/logger.ts';
import { changeKinds, type ChangeKind } from '../outcome/target-outcome.ts';
import { entriesRowEstimate, analyzeEntries } from './load-sql.ts';

/**
 * Share of refdata.entries' rows a sync must have changed for its statistics to be refreshed at
 * once: autovacuum's own default (autovacuum_analyze_scale_factor), so refsync analyzes no more
 * often than autovacuum would, only sooner.
 */
const ANALYZE_SHARE = 0.1;

/**
 * The columns analyzed: the ones statements filter, join or sort on. The payload, the description
 * and the entry hash are left to autovacuum: no plan reads their statistics (the typed views' fields
 * are expressions over the payload, which column statistics do not cover), and computing them was a
 * third of the ANALYZE of a million rows (460-600 ms with this list, 620-1000 ms without).
 */
const PLANNED_COLUMNS = 'id, environment, list_key, variant, entry_key, code, valid_from, valid_to, first_snapshot_id, last_snapshot_id';

/**
 * After a sync changed a large share of refdata.entries (a million-entry list's first load, a list
 * replaced), ANALYZE the table now instead of whenever autovacuum gets to it: a minute later at
 * best, never where it is off. Until then the planner plans the next sync's statements for the
 * table as it was: right after a first load of a million entries it took the read of the current
 * rows (large/current-index.ts) for a handful of rows and ran it as an index scan, a random heap read a
 * row (1.1-1.6 s in psql, against 0.6-0.8 s for the sequential scan fresh statistics choose), while
 * the resync's fetch waited for it: eight interleaved pairs of a 1% resync of a million took 1.56x
 * their collect floor without this, 1.27x with it (docs/performance.md, P3). Data teams'
 * queries on the views are planned from the same statistics.
 *
 * Run after the sync committed, on a connection of its own: SKIP_LOCKED never waits behind
 * another ANALYZE or a VACUUM of the table (which refresh it anyway), and a failure is logged,
 * never the sync's, whose rows are in. Small syncs cost nothing: below `minRows` the table's size
 * is not even asked.
 */
export async function analyzeAfterLargeWrite(db: Database, target: Target, counts: Record<ChangeKind, number>, minRows: number, logger: Logger): Promise<void> {
  const changed = changeKinds.reduce((sum, kind) => sum + counts[kind], 0);
  if (changed < minRows) return;
  try {
    // reltuples is -1 for a table never analyzed or vacuumed.
    const { rows } = await db.query<{ rows: number }>(entriesRowEstimate);
    if (changed < ANALYZE_SHARE * Math.max(rows[0]?.rows ?? 0, 0)) return;
    await db.query(analyzeEntries(PLANNED_COLUMNS));
    logger.debug({ target: listVariant(target), rowsChanged: changed }, 'analyzed refdata.entries after a large write');
  } catch (err) {
    logger.warn({ target: listVariant(target), err, rowsChanged: changed }, 'could not analyze refdata.entries after a large write; autovacuum will');
  }
}
