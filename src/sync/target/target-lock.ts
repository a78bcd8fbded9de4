import type { Queryable } from '../../db/database.ts';

/** One 64-bit advisory lock key per target (environment, list, variant). */
const LOCK_KEY = 'hashtextextended($1, 7302611)';
const lockName = (environment: string, listKey: string, variant: string) => [environment, listKey, variant].join('\u001f');

/**
 * Serialises writers of one target (environment, list, variant) across processes for the rest of
 * the transaction: two syncs of the same target commit one after the other, and the second sees
 * the first's result.
 */
export async function lockTarget(tx: Queryable, environment: string, listKey: string, variant: string): Promise<void> {
  await tx.query(`select pg_advisory_xact_lock(${LOCK_KEY})`, [lockName(environment, listKey, variant)]);
}

/** The same lock, taken only if it is free right now: whether it was. */
export async function tryLockTarget(tx: Queryable, environment: string, listKey: string, variant: string): Promise<boolean> {
  const { rows } = await tx.query<{ locked: boolean }>(`select pg_try_advisory_xact_lock(${LOCK_KEY}) as locked`, [lockName(environment, listKey, variant)]);
  return rows[0]?.locked === true;
}
