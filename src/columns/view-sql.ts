// The per-list views' DDL, by name (docs/architecture.md, "Where SQL lives"): the SELECT of each
// view from its contract columns and typed columns, and the statements that create, comment, grant
// and drop it. list-views.ts decides which of them a list needs.
import type { ListKey } from '../catalog/list-keys.ts';
import { READER_ROLE } from '../db/reader-role.ts';
import type { TypedColumn } from './typed-column.ts';
import { ident, literal, nonconformingExpression, typedExpression } from './typed-sql.ts';
import type { RelationDescription } from './view-descriptions.ts';

/** The SELECT of refdata.<list> (current rows) or refdata.<list>_history (every version). */
export function viewQuery(key: ListKey, relation: RelationDescription, typed: readonly TypedColumn[], history: boolean): string {
  const variant = relation.columns[1]!.name;
  const contract = ['environment', `variant AS ${variant}`, 'entry_key', 'code', 'description', 'payload', 'valid_from'];
  if (history) contract.push('valid_to');
  contract.push(`${nonconformingExpression(typed)} AS nonconforming`);
  const columns = [...contract, ...typed.map((c) => `${typedExpression(c)} AS ${ident(c.column)}`)];
  const from = history ? 'refdata.entries' : 'refdata.current_entries';
  return `SELECT ${columns.join(',\n       ')}\nFROM ${from}\nWHERE list_key = ${literal(key)}`;
}

/** CREATE (OR REPLACE) of view refdata.<view> as `query`. */
export const createView = (view: string, replace: boolean, query: string): string =>
  `CREATE ${replace ? 'OR REPLACE ' : ''}VIEW refdata.${ident(view)} AS\n${query}`;

export const dropView = (view: string): string => `DROP VIEW refdata.${ident(view)}`;

export const commentOnView = (view: string, description: string): string => `COMMENT ON VIEW refdata.${ident(view)} IS ${literal(description)}`;

export const commentOnColumn = (view: string, column: string, description: string): string =>
  `COMMENT ON COLUMN refdata.${ident(view)}.${ident(column)} IS ${literal(description)}`;

/** A grant read from the view's ACL (grantee already quoted), to give back after a re-create. */
export const grantOn = (view: string, privilege: string, grantee: string, grantable: boolean): string =>
  `GRANT ${privilege} ON refdata.${ident(view)} TO ${grantee}${grantable ? ' WITH GRANT OPTION' : ''}`;

export const grantSelectToReader = (view: string): string => `GRANT SELECT ON refdata.${ident(view)} TO ${READER_ROLE}`;

/**
 * The columns of views ($1: their qualified names), name and type (format_type) in order: a row per
 * column, one with a null name for a view without columns, `present` false for a missing view. On
 * every row, `functions`: the lists ($2) whose two typed functions ($3, $4: their signatures) both
 * exist, read in the same round trip (list-functions-sql.ts#listFunctionsParams).
 */
export const viewsColumns = `select v.view, v.oid is not null as present, a.attname as name, format_type(a.atttypid, a.atttypmod) as type,
       array(select f.list_key from unnest($2::text[], $3::text[], $4::text[]) as f(list_key, as_of, diff)
             where to_regprocedure(f.as_of) is not null and to_regprocedure(f.diff) is not null) as functions
     from unnest($1::text[]) with ordinality as n(view, ord)
     cross join lateral (select n.view, n.ord, to_regclass(n.view) as oid) v
     left join pg_attribute a on a.attrelid = v.oid and a.attnum > 0 and not a.attisdropped
     order by v.ord, a.attnum`;
