// At migrate time: the typed columns of lists synced before they existed are inferred once from the
// stored history, and every per-list view is brought to its recorded columns.
import { catalog } from '../catalog/catalog.ts';
import type { ListKey } from '../catalog/list-keys.ts';
import type { Database } from '../db/database.ts';
import { grantMigrationsToReader, migrateSchema } from '../db/migrate.ts';
import { listFunctionNames, entriesPayloadPage, listsWithoutColumns } from './columns-sql.ts';
import { FieldTracker } from './typed-columns.ts';
import { evolveListColumns, lockListColumns, updateListViews } from './recorded-columns.ts';

const BATCH = 5000;

/**
 * The column types of a list's stored entries, every version of them, read in batches by id.
 * Only for lists that have entries but no recorded columns: once per list, at the upgrade.
 */
async function inferFromHistory(db: Database, key: ListKey): Promise<FieldTracker | undefined> {
  const tracker = new FieldTracker();
  let after = 0;
  let seen = false;
  for (;;) {
    const { rows } = await db.query<{ id: string; payload: unknown }>(entriesPayloadPage, [key, after, BATCH]);
    for (const r of rows) tracker.observe(r.payload);
    if (rows.length) seen = true;
    if (rows.length < BATCH) return seen ? tracker : undefined;
    after = Number(rows[rows.length - 1]!.id);
  }
}

/** Records and creates what the per-list views lack; does nothing (no DDL) when they are up to date. */
export async function migrateListViews(db: Database): Promise<void> {
  // Lists with data but no recorded columns: synced before typed columns existed.
  const { rows } = await db.query<{ list_key: string }>(listsWithoutColumns);
  const unrecorded = new Set(rows.map((r) => r.list_key));
  for (const { key } of catalog) {
    const history = unrecorded.has(key) ? await inferFromHistory(db, key) : undefined;
    await db.transaction(async (tx) => {
      // A sync changing this list's columns meanwhile would otherwise race this reconcile.
      await lockListColumns(tx, key);
      const { rows: clock } = await tx.query<{ now: Date }>('select clock_timestamp() as now');
      if (history) await evolveListColumns(tx, key, history.fieldValues(), null, clock[0]!.now);
      // Views that objects of the user keep from being re-created wait for the first sync after them.
      await updateListViews(tx, key, [], null, clock[0]!.now);
    });
  }
}

/**
 * `refsync migrate`: the committed migrations (src/db/migrate.ts#migrateSchema), then the per-list
 * views brought to their recorded typed columns (generated in TypeScript, so their SQL lives in one
 * place), each list in a transaction of its own, then the grants to refdata_reader once it exists:
 * `readerMissing` while it does not.
 */
export async function migrateDatabase(db: Database): Promise<{ readerMissing: boolean }> {
  await migrateSchema(db);
  await migrateListViews(db);
  const granted = await grantMigrationsToReader(
    db,
    catalog.flatMap(({ key }) => listFunctionNames(key)),
  );
  return { readerMissing: !granted };
}
