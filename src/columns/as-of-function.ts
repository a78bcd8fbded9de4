// refdata.<list>_as_of(p_at, p_variant, p_environment, p_extend_back): the typed history of one list
// as it was at p_at. It returns the rows of refdata.<list>_history, so it is typed exactly like that
// view and follows it when columns are appended; a view re-created for a type change drops it
// first and creates it again after (the function depends on the view's row type).
import type { ListKey } from '../catalog/list-keys.ts';
import type { Queryable } from '../db/database.ts';

const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;
const literal = (text: string): string => `'${text.replace(/'/g, "''")}'`;

export const asOfFunctionName = (key: ListKey): string => `${key}_as_of`;
const signature = (key: ListKey) => `refdata.${ident(asOfFunctionName(key))}(timestamptz, text, text, boolean)`;

/**
 * The variant parameter. charge_codes_as_of existed before the typed functions, with p_version
 * defaulting to 'unpinned'; it keeps both, so that existing calls read the same rows.
 */
function variantParameter(key: ListKey): { name: string; fallback: string } {
  return key === 'charge_codes' ? { name: 'p_version', fallback: "'unpinned'" } : { name: 'p_variant', fallback: 'NULL' };
}

/**
 * The function, its comment and grants. Plain SQL, STABLE, without SET or SECURITY DEFINER: the
 * planner inlines it, so a LATERAL join per fact reads the entries indexes. p_extend_back lets a
 * time before the list's first sync read the versions that first sync recorded (strict when false,
 * the default: before the first sync the list is empty).
 */
export function asOfFunctionStatements(key: ListKey, variantColumn: string): string[] {
  const history = `refdata.${ident(`${key}_history`)}`;
  const fn = `refdata.${ident(asOfFunctionName(key))}`;
  const variant = variantParameter(key);
  return [
    `CREATE OR REPLACE FUNCTION ${fn}(
  p_at timestamptz,
  ${variant.name} text DEFAULT ${variant.fallback},
  p_environment text DEFAULT NULL,
  p_extend_back boolean DEFAULT false
)
RETURNS SETOF ${history}
LANGUAGE sql
STABLE
PARALLEL SAFE
AS $fn$
  SELECT h.*
  FROM ${history} h
  WHERE (${variant.name} IS NULL OR h.${ident(variantColumn)} = ${variant.name})
    AND (p_environment IS NULL OR h.environment = p_environment)
    AND (h.valid_to IS NULL OR h.valid_to > p_at)
    AND (h.valid_from <= p_at OR (p_extend_back AND EXISTS (
      SELECT 1 FROM refdata.entries e
      WHERE e.environment = h.environment AND e.list_key = ${literal(key)} AND e.variant = h.${ident(variantColumn)}
        AND e.entry_key = h.entry_key AND e.valid_from = h.valid_from
        AND e.first_snapshot_id = (
          SELECT min(s.id) FROM refdata.snapshots s
          WHERE s.environment = e.environment AND s.list_key = e.list_key AND s.variant = e.variant AND s.status = 'ok'))))
$fn$`,
    `COMMENT ON FUNCTION ${signature(key)} IS ${literal(
      `The rows of refdata.${key}_history valid at p_at (valid_from <= p_at < valid_to), typed columns included: the list ${key} as it was then. ${variant.name} (${variantColumn}; default ${variant.fallback === 'NULL' ? 'every one' : variant.fallback}) and p_environment narrow it. p_extend_back: for a time before the list's first sync (refdata.list_sync_times.first_synced_at), read the versions that first sync recorded instead of nothing. Example: from facts f cross join lateral refdata.${key}_as_of(f.at) x where x.code = f.code.`,
    )}`,
    `REVOKE EXECUTE ON FUNCTION ${signature(key)} FROM PUBLIC`,
    `GRANT EXECUTE ON FUNCTION ${signature(key)} TO refdata_reader`,
  ];
}

/** Dropped before its history view is re-created: the function holds the view's row type. */
export function dropAsOfFunction(key: ListKey): string {
  return `DROP FUNCTION IF EXISTS ${signature(key)}`;
}

export async function asOfFunctionExists(q: Queryable, key: ListKey): Promise<boolean> {
  const { rows } = await q.query<{ ok: boolean }>('select to_regprocedure($1) is not null as ok', [signature(key)]);
  return rows[0]?.ok === true;
}
