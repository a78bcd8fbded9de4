// The demo's stand-in for a user's own data: a small shipments table whose accessorial and
// equipment-type columns are named as usage sources, so the demo's changes show their impact.
import type { UsageSource } from '../../config/types.ts';
import type { Database } from '../../db/database.ts';
import { orphans } from '../../db/functions.ts';
import { formatTable } from '../output/table.ts';
import { cellText } from '../output/terminal.ts';

export const DEMO_FACTS = 'refsync_demo.shipments';

/** As a user writes it in the REFSYNC_CONFIG file. */
export const demoUsage: UsageSource[] = [
  { list: 'accessorials', column: `${DEMO_FACTS}.accessorial`, at: 'shipped_at', groupBy: 'customer', recentDays: 90 },
  { list: 'equipment_types', column: `${DEMO_FACTS}.equipment_type`, at: 'shipped_at', groupBy: 'customer', recentDays: 90 },
];

/** 120 shipments, one a day back from now, so a quarter of them are older than the 90 days in use; one holds a code no list has. */
export async function createDemoFacts(db: Database): Promise<void> {
  await db.query('create schema if not exists refsync_demo');
  await db.query(`drop table if exists ${DEMO_FACTS}`);
  await db.query(`create table ${DEMO_FACTS} (id int primary key, accessorial text, equipment_type text, customer text, shipped_at timestamptz)`);
  await db.query(
    `insert into ${DEMO_FACTS}
     select i, case when i = 7 then 'LFTG' else (array['LGDEL', 'RESDEL', 'INDEL', 'LGDEL', 'NOTIFY', 'LGPU'])[1 + i % 6] end,
            (array['DRY_VAN', 'REEFER', 'FLATBED'])[1 + i % 3], (array['Acme Foods', 'Globex', 'Initech', 'Umbrella'])[1 + i % 4],
            now() - make_interval(days => i, hours => 12)
     from generate_series(1, 120) i`,
  );
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
  }>(
    `select c.code, c.change, i ->> 'column' as col, (i ->> 'rows')::int as rows, i ->> 'from' as from, i ->> 'to' as to, i -> 'top' as top
     from refdata.entry_changes c cross join jsonb_array_elements(c.impact) i
     where c.environment = $1 order by rows desc, c.code`,
    [environment],
  );
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
