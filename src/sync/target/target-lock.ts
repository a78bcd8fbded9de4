import type { Queryable } from '../../db/database.ts';

/**
 * One 64-bit advisory lock key per target (environment, list, variant), defined once in SQL
 * (refdata.target_lock_key, migration 0010): refdata.lock_target_state takes the same lock.
 */
const LOCK_KEY = 'refdata.target_lock_key($1, $2, $3)';

/**
 * Serialises writers of one target (environment, list, variant) across processes for the rest of
 * the transaction: two syncs of the same target commit one after the other, and the second sees
 * the first's result.
 */
export async function lockTarget(tx: Queryable, environment: string, listKey: string, variant: string): Promise<void> {
  await tx.query(`select pg_advisory_xact_lock(${LOCK_KEY})`, [environment, listKey, variant]);
}

/** The same lock, taken only if it is free right now: whether it was. */
export async function tryLockTarget(tx: Queryable, environment: string, listKey: string, variant: string): Promise<boolean> {
  const { rows } = await tx.query<{ locked: boolean }>(`select pg_try_advisory_xact_lock(${LOCK_KEY}) as locked`, [environment, listKey, variant]);
  return rows[0]?.locked === true;
}
