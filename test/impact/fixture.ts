import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Database } from '../../src/db/database.ts';
import { testTempDir } from '../helpers/temp-dir.ts';

/** A fact: the code it holds, how many days before the test's clock it happened, and a customer. */
export type Fact = [code: string | null, daysAgo: number, customer: string];

/** The test's clock, to the millisecond: fact times and the expected time ranges both come from it. */
export const clock = Date.now();
export const ago = (days: number) => new Date(clock - days * 86_400_000);

/** A user's fact table, public.<name>(charge_code text, shipped_at timestamptz, customer text). */
export async function createFacts(db: Database, name: string, facts: Fact[]): Promise<string> {
  await db.query(`create table public.${name} (id serial primary key, charge_code text, shipped_at timestamptz, customer text)`);
  for (const [code, days, customer] of facts) {
    await db.query(`insert into public.${name} (charge_code, shipped_at, customer) values ($1, $2, $3)`, [code, ago(days), customer]);
  }
  return `public.${name}.charge_code`;
}

/** A REFSYNC_CONFIG file holding only `usage`: the source comes from the environment. */
export function usageConfig(usage: unknown[]): string {
  const path = join(testTempDir('refsync-impact'), 'refsync.json');
  writeFileSync(path, JSON.stringify({ usage }));
  return path;
}
