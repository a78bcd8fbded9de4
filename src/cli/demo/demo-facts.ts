// The demo's stand-in for a user's own data: a small shipments table whose accessorial and
// equipment-type columns are named as usage sources, so the demo's changes show their impact.
import type { UsageSource } from '../../config/types.ts';
import type { Database } from '../../db/database.ts';
import { orphans } from '../../db/functions.ts';
import { formatTable } from '../output/table.ts';
import { cellText } from '../output/terminal.ts';
import { demoImpact, createDemoSchema, dropDemoFacts, createDemoFactsTable, fillDemoFacts } from './demo-sql.ts';

export const DEMO_FACTS = 'refsync_demo.shipments';

/** As a user writes it in the REFSYNC_CONFIG file. */
export const demoUsage: UsageSource[] = [
  { list: 'accessorials', column: `${DEMO_FACTS}.accessorial`, at: 'shipped_at', groupBy: 'customer', recentDays: 90 },
  { list: 'equipment_types', column: `${DEMO_FACTS}.equipment_type`, at: 'shipped_at', groupBy: 'customer', recentDays: 90 },
];

/** 120 shipments, one a day back from now, so a quarter of them are older than the 90 days in use; one holds a code no list has. */
export async function createDemoFacts(db: Database): Promise<void> {
  await db.query(createDemoSchema);
  await db.query(dropDemoFacts(DEMO_FACTS));
  await db.query(createDemoFactsTable(DEMO_FACTS));
  await db.query(fillDemoFacts(DEMO_FACTS));
}

const day = (iso: string | null) => iso?.slice(0, 10) ?? null;

/** The impact the second sync recorded on its change rows, and the orphans left now. */
export async function printDemoImpact(db: Database, environment: string, print: (line?: string) => void): Promise<void> {
  const { rows } = await db.query<{
    code: string;
    change: string;
    col: string;
    rows: number;
    from: string | null;
    to: string | null;
    top: Array<{ value: string; rows: number }> | null;
  }>(demoImpact, [environment]);
  print(
    formatTable(
      ['code', 'change', 'column', 'rows in use', 'from', 'to', 'top customers'],
      rows.map((r) => [r.code, r.change, r.col, r.rows, day(r.from), day(r.to), (r.top ?? []).map((t) => `${t.value} ${t.rows}`).join(', ') || null]),
    ),
  );
  const lost = await orphans(db, demoUsage[0]!.column, 'accessorials', '', { environment });
  print(
    `orphans now (refsync impact orphans): ${lost.map((o) => `${cellText(o.value)} ${o.rows} ${o.rows === 1 ? 'row' : 'rows'}`).join(', ')} in ${demoUsage[0]!.column}`,
  );
}
