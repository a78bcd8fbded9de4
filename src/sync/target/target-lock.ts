import type { Queryable } from '../../db/database.ts';
import { lockTargetKey, tryLockTargetKey } from '../sql.ts';

/**
 * Serialises writers of one target (environment, list, variant) across processes for the rest of
 * the transaction: two syncs of the same target commit one after the other, and the second sees
 * the first's result.
 */
export async function lockTarget(tx: Queryable, environment: string, listKey: string, variant: string): Promise<void> {
  await tx.query(lockTargetKey, [environment, listKey, variant]);
}

/** The same lock, taken only if it is free right now: whether it was. */
export async function tryLockTarget(tx: Queryable, environment: string, listKey: string, variant: string): Promise<boolean> {
  const { rows } = await tx.query<{ locked: boolean }>(tryLockTargetKey, [environment, listKey, variant]);
  return rows[0]?.locked === true;
}
