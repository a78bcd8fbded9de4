// The statements that call refdata's functions for data teams' typed wrappers (functions.ts), by
// name. The functions' bodies in force: docs/sql-functions.md.

/** refdata.entries_as_of, in a stable order. */
export const entriesAsOfQuery = 'select * from refdata.entries_as_of($1, $2, $3, $4) order by environment, variant, entry_key';

/** refdata.charge_code_version_diff, in a stable order. */
export const chargeCodeVersionDiffQuery = 'select * from refdata.charge_code_version_diff($1, $2, $3) order by environment, change, code';

/** refdata.entries_diff, in a stable order. */
export const entriesDiffQuery = 'select * from refdata.entries_diff($1, $2, $3, $4, $5) order by environment, variant, change, entry_key';

/** The charge-code versions held, with their counts. */
export const chargeCodeVersionsQuery = `select environment, version, count(*)::int as count
     from refdata.charge_codes
     where $1::text is null or environment = $1
     group by environment, version
     order by environment, version`;

/** refdata.code_usage. */
export const codeUsageQuery = 'select code, rows::float8 as rows, first_at, last_at, top from refdata.code_usage($1, $2::text[], $3, $4, $5)';

/** refdata.orphans. */
export const orphansQuery = 'select value, rows::float8 as rows from refdata.orphans($1, $2, $3, $4, $5)';
