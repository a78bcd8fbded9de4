// The typed functions of each list, over refdata.<list>_history:
// - refdata.<list>_as_of(p_at, p_variant, p_environment, p_extend_back): the list as it was at p_at;
// - refdata.<list>_diff(p_from, p_to, p_variant, p_environment): what changed between two times,
//   the versions before and after as whole typed rows, so their columns sit side by side.
// Both use the view's row type, so they are typed exactly like it and follow it when columns are
// appended; a view re-created for a type change drops them first and creates them again after.
// Their SQL is built here, by name (docs/architecture.md, "Where SQL lives"); list-views.ts runs it.
import type { ListKey } from '../catalog/list-keys.ts';
import { READER_ROLE, whenReaderExists } from '../db/reader-role.ts';
import { ident, literal } from './typed-sql.ts';

export const asOfFunctionName = (key: ListKey): string => `${key}_as_of`;
/** The names of the list's typed functions, whose dependents count as the history view's. */
export const listFunctionNames = (key: ListKey): string[] => [asOfFunctionName(key), `${key}_diff`];
const signature = (key: ListKey) => `refdata.${ident(asOfFunctionName(key))}(timestamptz, text, text, boolean)`;
const diffSignature = (key: ListKey) => `refdata.${ident(`${key}_diff`)}(timestamptz, timestamptz, text, text)`;

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
function asOfFunctionStatements(key: ListKey, variantColumn: string): string[] {
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
    whenReaderExists([`GRANT EXECUTE ON FUNCTION ${signature(key)} TO ${READER_ROLE}`]),
  ];
}

/**
 * refdata.<list>_diff: the list at p_from against the list at p_to (default now), one row per entry
 * added, removed or modified, with `before` and `after` as typed rows of refdata.<list>_history:
 * `select change, (before).length_ft, (after).length_ft from refdata.equipment_types_diff(...)`.
 */
function diffFunctionStatements(key: ListKey, variantColumn: string): string[] {
  const history = `refdata.${ident(`${key}_history`)}`;
  const asOf = `refdata.${ident(asOfFunctionName(key))}`;
  const v = ident(variantColumn);
  return [
    `CREATE OR REPLACE FUNCTION refdata.${ident(`${key}_diff`)}(
  p_from timestamptz,
  p_to timestamptz DEFAULT now(),
  p_variant text DEFAULT NULL,
  p_environment text DEFAULT NULL
)
RETURNS TABLE (environment text, ${v} text, entry_key text, change text, changed_fields text[], before ${history}, after ${history})
LANGUAGE sql
STABLE
PARALLEL SAFE
AS $fn$
  SELECT coalesce(a.environment, b.environment), coalesce(a.${v}, b.${v}), coalesce(a.entry_key, b.entry_key),
    CASE WHEN a.entry_key IS NULL THEN 'added' WHEN b.entry_key IS NULL THEN 'removed' ELSE 'modified' END,
    CASE WHEN a.entry_key IS NOT NULL AND b.entry_key IS NOT NULL THEN refdata.changed_fields(a.payload, b.payload) END,
    CASE WHEN a.entry_key IS NULL THEN NULL ELSE a END,
    CASE WHEN b.entry_key IS NULL THEN NULL ELSE b END
  FROM ${asOf}(p_from, p_variant, p_environment) a
  FULL JOIN ${asOf}(p_to, p_variant, p_environment) b
    ON b.environment = a.environment AND b.${v} = a.${v} AND b.entry_key = a.entry_key
  WHERE a.entry_key IS NULL OR b.entry_key IS NULL OR a.payload IS DISTINCT FROM b.payload
$fn$`,
    `COMMENT ON FUNCTION ${diffSignature(key)} IS ${literal(
      `What changed in ${key} between p_from and p_to (default now): change is added, removed or modified, changed_fields the top-level fields whose values differ, before and after the versions as typed rows of refdata.${key}_history, so their columns sit side by side. Example: select entry_key, change, (before).description, (after).description from refdata.${key}_diff('2026-03-01', '2026-06-01').`,
    )}`,
    `REVOKE EXECUTE ON FUNCTION ${diffSignature(key)} FROM PUBLIC`,
    whenReaderExists([`GRANT EXECUTE ON FUNCTION ${diffSignature(key)} TO ${READER_ROLE}`]),
  ];
}

/** Both typed functions of a list, as statements. */
export function listFunctionStatements(key: ListKey, variantColumn: string): string[] {
  return [...asOfFunctionStatements(key, variantColumn), ...diffFunctionStatements(key, variantColumn)];
}

/** Dropped before its history view is re-created: the functions hold the view's row type. */
export function dropListFunctions(key: ListKey): string {
  return `DROP FUNCTION IF EXISTS ${diffSignature(key)}, ${signature(key)}`;
}

/** The parameters by which viewsColumns (view-sql.ts) says which lists' two typed functions both exist: the lists and their functions' signatures. */
export function listFunctionsParams(keys: readonly ListKey[]): [readonly ListKey[], string[], string[]] {
  return [keys, keys.map(signature), keys.map(diffSignature)];
}
