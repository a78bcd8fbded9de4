import type { Queryable } from '../db/database.ts';

/**
 * Serialises writers of one target (environment, list, variant) across processes for the rest of
 * the transaction: two syncs of the same target commit one after the other, and the second sees
 * the first's result.
 */
export async function lockTarget(tx: Queryable, environment: string, listKey: string, variant: string): Promise<void> {
  await tx.query('select pg_advisory_xact_lock(hashtextextended($1, 7302611))', [
    [environment, listKey, variant].join("\u001f"),
  ]);
}
