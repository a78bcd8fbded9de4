-- Impact on the user's own data: the impact a change had on the facts that use its code, and the
-- two functions that read those facts. The functions run as their caller (SECURITY INVOKER), so
-- refsync (or a dbt test) reads the user's tables only with the column grants it was given.
ALTER TABLE refdata.entry_changes ADD COLUMN impact jsonb;
--> statement-breakpoint
COMMENT ON COLUMN refdata.entry_changes.impact IS 'For a removed or modified code that facts use: one element per usage column, {column, rows, from, to, top} (facts in use with the code, their time range, the top values of groupBy). Null when no usage column uses the code.';
--> statement-breakpoint
ALTER TABLE refdata.snapshots ADD COLUMN impact_error text;
--> statement-breakpoint
COMMENT ON COLUMN refdata.snapshots.impact_error IS 'Why the impact of this snapshot''s changes on a usage column could not be computed (missing table, no privilege, ...); the snapshot itself was applied.';
--> statement-breakpoint
-- A usage name as Postgres reads it (unquoted names fold to lower case, "Quoted" ones keep theirs),
-- checked to have as many parts as its place needs: 3 for schema.table.column, 1 for a column.
CREATE FUNCTION refdata.usage_name(p_name text, p_parts integer)
RETURNS text[]
LANGUAGE plpgsql
IMMUTABLE
AS $$
DECLARE
  parts text[] := parse_ident(p_name);
BEGIN
  IF array_length(parts, 1) <> p_parts THEN
    RAISE EXCEPTION 'usage name ''%'' must be %', p_name,
      CASE p_parts WHEN 3 THEN 'schema.table.column' ELSE 'a column name' END USING ERRCODE = '22023';
  END IF;
  RETURN parts;
END
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.usage_name(text, integer) IS 'Splits a usage name (''schema.table.column'' with p_parts 3, a column with 1) into its names as Postgres reads them (unquoted names fold to lower case); raises unless it has p_parts parts. Used by refdata.code_usage and refdata.orphans.';
--> statement-breakpoint
-- One set-based pass over the facts: the rows whose code is one of p_codes (an index on the code
-- column, or on (code, at), serves the filter), counted per code, with their time range and the
-- top values of p_group_by.
CREATE FUNCTION refdata.code_usage(
  p_column text,
  p_codes text[],
  p_at text DEFAULT NULL,
  p_since timestamptz DEFAULT NULL,
  p_group_by text DEFAULT NULL,
  p_top integer DEFAULT 5
)
RETURNS TABLE (code text, rows bigint, first_at timestamptz, last_at timestamptz, top jsonb)
LANGUAGE plpgsql
STABLE
AS $$
DECLARE
  col text[] := refdata.usage_name(p_column, 3);
  at_expr text := 'NULL::timestamptz';
  since_filter text := '';
  group_expr text := 'NULL::text';
BEGIN
  IF p_at IS NOT NULL THEN
    at_expr := format('f.%I::timestamptz', (refdata.usage_name(p_at, 1))[1]);
    IF p_since IS NOT NULL THEN
      since_filter := format('AND f.%I >= $2', (refdata.usage_name(p_at, 1))[1]);
    END IF;
  END IF;
  IF p_group_by IS NOT NULL THEN
    group_expr := format('f.%I::text', (refdata.usage_name(p_group_by, 1))[1]);
  END IF;
  RETURN QUERY EXECUTE format(
    $q$WITH hits AS MATERIALIZED (
         SELECT f.%3$I::text AS code, %4$s AS at, %5$s AS grp
         FROM %1$I.%2$I f
         WHERE f.%3$I = ANY($1) %6$s),
       totals AS (
         SELECT h.code, count(*) AS n, min(h.at) AS first_at, max(h.at) AS last_at FROM hits h GROUP BY h.code),
       groups AS (
         SELECT h.code, h.grp, count(*) AS n,
                row_number() OVER (PARTITION BY h.code ORDER BY count(*) DESC, h.grp) AS rn
         FROM hits h GROUP BY h.code, h.grp)
       SELECT t.code, t.n, t.first_at, t.last_at,
              CASE WHEN %7$L::boolean THEN
                (SELECT jsonb_agg(jsonb_build_object('value', g.grp, 'rows', g.n) ORDER BY g.rn)
                 FROM groups g WHERE g.code = t.code AND g.rn <= $3)
              END
       FROM totals t ORDER BY t.code$q$,
    col[1], col[2], col[3], at_expr, group_expr, since_filter, p_group_by IS NOT NULL)
  USING p_codes, p_since, p_top;
END
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.code_usage(text, text[], text, timestamptz, text, integer) IS 'How many facts in p_column (schema.table.column) hold each of p_codes: rows, first_at/last_at of the timestamp column p_at, and the top p_top values of p_group_by as [{value, rows}]. With p_at and p_since, only facts with p_at >= p_since count. Example: select * from refdata.code_usage(''public.shipments.charge_code'', array[''TON'',''NOA''], ''shipped_at'', now() - interval ''90 days'', ''customer'').';
--> statement-breakpoint
-- Fact values are grouped first, so the lookup in refdata.entries runs once per distinct value.
CREATE FUNCTION refdata.orphans(
  p_column text,
  p_list_key text,
  p_variant text DEFAULT '',
  p_environment text DEFAULT NULL,
  p_at timestamptz DEFAULT NULL
)
RETURNS TABLE (value text, rows bigint)
LANGUAGE plpgsql
STABLE
AS $$
DECLARE
  col text[] := refdata.usage_name(p_column, 3);
BEGIN
  RETURN QUERY EXECUTE format(
    $q$SELECT f.value, f.n
       FROM (SELECT %3$I::text AS value, count(*) AS n FROM %1$I.%2$I WHERE %3$I IS NOT NULL GROUP BY 1) f
       WHERE NOT EXISTS (
         SELECT 1 FROM refdata.entries e
         WHERE e.list_key = $1 AND e.variant = $2
           AND ($3::text IS NULL OR e.environment = $3)
           AND e.code = f.value
           AND CASE WHEN $4::timestamptz IS NULL THEN e.valid_to IS NULL
                    ELSE e.valid_from <= $4 AND (e.valid_to IS NULL OR e.valid_to > $4) END)
       ORDER BY f.n DESC, f.value$q$,
    col[1], col[2], col[3])
  USING p_list_key, p_variant, p_environment, p_at;
END
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.orphans(text, text, text, text, timestamptz) IS 'Values of p_column (schema.table.column) that match the code of no entry of list p_list_key, variant p_variant, current now (or valid at p_at), with how many facts hold each. p_environment narrows the entries; null means any. Empty when every fact matches: as a dbt test, select * from refdata.orphans(''public.shipments.charge_code'', ''charge_codes'', ''2024-06-11'').';
--> statement-breakpoint
-- The reader calls code_usage and orphans with its own rights, and they call usage_name.
REVOKE EXECUTE ON FUNCTION refdata.usage_name(text, integer) FROM PUBLIC;
--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION refdata.code_usage(text, text[], text, timestamptz, text, integer) FROM PUBLIC;
--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION refdata.orphans(text, text, text, text, timestamptz) FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION refdata.code_usage(text, text[], text, timestamptz, text, integer) TO refdata_reader;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION refdata.orphans(text, text, text, text, timestamptz) TO refdata_reader;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION refdata.usage_name(text, integer) TO refdata_reader;
