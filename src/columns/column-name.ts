// Column names for the fields a list serves. A name, once recorded, never changes (the recorded
// schema keeps it), so the rules below only ever run for fields seen for the first time.

const plainIdentifier = /^[a-z_][a-z0-9_]{0,62}$/;
const MAX_BASE = 50;

/**
 * The field folded to a plain lower-case identifier: camelCase split with '_', lower-cased, every
 * run of other characters made one '_', '_' trimmed at both ends, 'f_' before a leading digit,
 * 'field' when nothing is left, cut to 50 characters (room for a suffix within Postgres's 63).
 */
export function foldFieldName(field: string): string {
  if (plainIdentifier.test(field)) return field;
  let name = field
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, MAX_BASE)
    .replace(/_+$/, '');
  if (name === '') name = 'field';
  if (/^\d/.test(name)) name = `f_${name}`;
  return name;
}

/**
 * Names for new fields, given the names already taken. Fields that are plain identifiers claim
 * their own name before folded ones, then each in field order, so the outcome does not depend on
 * the order the service sent them. A name that is a contract column of the view gets `_field`
 * (the field `code` becomes `code_field`); a name still taken gets `_2`, `_3`, ... No field is dropped.
 */
export function nameNewFields(fields: readonly string[], contractColumns: readonly string[], taken: Iterable<string>): Map<string, string> {
  const used = new Set<string>([...contractColumns, ...taken]);
  const contract = new Set(contractColumns);
  const ordered = [...fields].sort((a, b) => Number(!plainIdentifier.test(a)) - Number(!plainIdentifier.test(b)) || (a < b ? -1 : a > b ? 1 : 0));
  const names = new Map<string, string>();
  for (const field of ordered) {
    let base = foldFieldName(field);
    if (contract.has(base)) base = `${base}_field`;
    let name = base;
    for (let n = 2; used.has(name); n++) name = `${base}_${n}`;
    used.add(name);
    names.set(field, name);
  }
  return names;
}
