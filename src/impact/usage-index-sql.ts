// The catalog read behind usage-index.ts, kept here beside nothing else: which usage columns have an
// index that begins with them, and how large their tables are.

/**
 * One row per ($1[i], $2[i]) pair of usage column (`schema.table.column`, split as Postgres reads it
 * by refdata.usage_name) and its `at` column (or null), for the tables and columns that exist:
 * - `indexed`: some valid index of the table has the column as its first key, so the impact's
 *   filter on the changed codes is an index range scan (a btree or a hash index; an expression
 *   index does not count);
 * - `bytes`: the table's size, its partitions' summed for a partitioned table (an index on the
 *   parent is listed with the parent);
 * - `rows_estimate`: the planner's row count, likewise summed (0 before the table was first analysed);
 * - `create_index`: the statement that would add the index, on (column, at) when `at` is named.
 */
export const usageIndexesQuery = `
select u.column_name as "column",
       s.bytes, s.rows_estimate,
       exists (select 1 from pg_index as i
               where i.indrelid = c.oid and i.indisvalid and i.indkey[0] = a.attnum) as indexed,
       format('CREATE INDEX ON %I.%I (%I%s)', n.parts[1], n.parts[2], n.parts[3],
              case when u.at is null then '' else format(', %I', lower(u.at)) end) as create_index
from unnest($1::text[], $2::text[]) as u(column_name, at)
cross join lateral refdata.usage_name(u.column_name, 3) as n(parts)
join pg_class as c on c.oid = to_regclass(format('%I.%I', n.parts[1], n.parts[2]))
join pg_attribute as a on a.attrelid = c.oid and a.attname = n.parts[3] and not a.attisdropped
cross join lateral (
  -- The table itself, or a partitioned table's leaves (pg_partition_tree lists nothing for a plain table).
  select coalesce(sum(pg_relation_size(t.oid)), 0)::float8 as bytes, coalesce(sum(greatest(t.reltuples, 0)), 0)::float8 as rows_estimate
  from pg_class as t
  where t.oid = c.oid or t.oid in (select relid from pg_partition_tree(c.oid) where isleaf)
) as s`;
