// The demo's SQL, by name: what it reads back to show the diff and the alerts, and the facts table
// it makes to stand for a user's own data (docs/architecture.md, "Where SQL lives").

/** The changes the demo's second sync recorded, as the demo prints them. */
export const demoChanges = `select list_key, variant, change, coalesce(code, entry_key) as code, array_to_string(changed_fields, ',') as fields,
            coalesce(before ->> 'description', before ->> 'name') as before, coalesce(after ->> 'description', after ->> 'name') as after
     from refdata.entry_changes where environment = $1 order by list_key, variant, code`;

/** The alerts of the demo's environment, each with the codes it names. */
export const demoAlerts = `select id, kind, list_key, variant, state,
            coalesce((select string_agg(coalesce(e ->> 'code', e ->> 'entry_key'), ', ') from jsonb_array_elements(payload -> 'entries') e),
                     (select string_agg(distinct e ->> 'code', ', ') from jsonb_array_elements(payload -> 'impact') e)) as codes
     from refdata.alerts where environment = $1 order by id`;

/** The impact on the demo's facts recorded with each change. */
export const demoImpact = `select c.code, c.change, i ->> 'column' as col, (i ->> 'rows')::int as rows, i ->> 'from' as from, i ->> 'to' as to, i -> 'top' as top
     from refdata.entry_changes c cross join jsonb_array_elements(c.impact) i
     where c.environment = $1 order by rows desc, c.code`;

/** The demo's schema for its facts. */
export const createDemoSchema = 'create schema if not exists refsync_demo';

/** Drops the demo's facts table. */
export const dropDemoFacts = (table: string): string => `drop table if exists ${table}`;

/** The demo's facts table: shipments naming accessorials and equipment types. */
export const createDemoFactsTable = (table: string): string =>
  `create table ${table} (id int primary key, accessorial text, equipment_type text, customer text, shipped_at timestamptz)`;

/** 120 shipments, one a day back from now; one holds a code no list has. */
export const fillDemoFacts = (table: string): string =>
  `insert into ${table}
     select i, case when i = 7 then 'LFTG' else (array['LGDEL', 'RESDEL', 'INDEL', 'LGDEL', 'NOTIFY', 'LGPU'])[1 + i % 6] end,
            (array['DRY_VAN', 'REEFER', 'FLATBED'])[1 + i % 3], (array['Acme Foods', 'Globex', 'Initech', 'Umbrella'])[1 + i % 4],
            now() - make_interval(days => i, hours => 12)
     from generate_series(1, 120) i`;
