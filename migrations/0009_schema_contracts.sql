-- Typed columns that never make a read fail. Each refdata.as_<type>(v) returns the JSON value v as
-- that type when it fits (the same rule as src/columns/column-type.ts#valueType) and NULL when it
-- does not: a value that does not fit its column is "nonconforming", NULL in the typed column and
-- kept in payload, and the views list it in their nonconforming column. The checks run before any
-- cast, nested in CASE (whose order Postgres keeps), so no cast can raise.
CREATE FUNCTION refdata.is_valid_day(y integer, m integer, d integer) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT y >= 1 AND m BETWEEN 1 AND 12 AND d >= 1 AND d <= CASE
    WHEN m = 2 THEN CASE WHEN y % 4 = 0 AND (y % 100 <> 0 OR y % 400 = 0) THEN 29 ELSE 28 END
    WHEN m IN (4, 6, 9, 11) THEN 30
    ELSE 31 END
$$;
--> statement-breakpoint
CREATE FUNCTION refdata.as_boolean(v jsonb) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN jsonb_typeof(v) = 'boolean' THEN (v #>> '{}')::boolean END
$$;
--> statement-breakpoint
CREATE FUNCTION refdata.as_bigint(v jsonb) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN jsonb_typeof(v) = 'number' THEN CASE
    WHEN (v #>> '{}') ~ '^-?[0-9]{1,18}$' THEN (v #>> '{}')::bigint
    WHEN (v #>> '{}') ~ '^-?[0-9]{19}$' AND (v #>> '{}')::numeric BETWEEN -9223372036854775808 AND 9223372036854775807 THEN (v #>> '{}')::bigint
  END END
$$;
--> statement-breakpoint
CREATE FUNCTION refdata.as_numeric(v jsonb) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN jsonb_typeof(v) = 'number' THEN (v #>> '{}')::numeric END
$$;
--> statement-breakpoint
CREATE FUNCTION refdata.as_text(v jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN jsonb_typeof(v) IN ('string', 'number') THEN v #>> '{}' END
$$;
--> statement-breakpoint
CREATE FUNCTION refdata.as_date(v jsonb) RETURNS date
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN jsonb_typeof(v) = 'string' THEN CASE WHEN (v #>> '{}') ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' THEN CASE
    WHEN refdata.is_valid_day(substr(v #>> '{}', 1, 4)::int, substr(v #>> '{}', 6, 2)::int, substr(v #>> '{}', 9, 2)::int)
    THEN (v #>> '{}')::date
  END END END
$$;
--> statement-breakpoint
CREATE FUNCTION refdata.as_timestamptz(v jsonb) RETURNS timestamptz
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN m IS NOT NULL AND refdata.is_valid_day(m[1]::int, m[2]::int, m[3]::int)
      AND m[4]::int <= 23 AND m[5]::int <= 59 AND coalesce(m[6]::int, 0) <= 59
      AND coalesce(m[7]::int, 0) <= 15 AND coalesce(m[8]::int, 0) <= 59
    THEN (v #>> '{}')::timestamptz END
  FROM (SELECT CASE WHEN jsonb_typeof(v) = 'string' AND length(v #>> '{}') BETWEEN 17 AND 40 THEN regexp_match(v #>> '{}',
    '^([0-9]{4})-([0-9]{2})-([0-9]{2})[T ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.[0-9]+)?)?(?:Z|[+-]([0-9]{2})(?::?([0-9]{2}))?)$') END AS m) s
$$;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION refdata.is_valid_day(integer, integer, integer), refdata.as_boolean(jsonb), refdata.as_bigint(jsonb),
  refdata.as_numeric(jsonb), refdata.as_text(jsonb), refdata.as_date(jsonb), refdata.as_timestamptz(jsonb) TO refdata_reader;
--> statement-breakpoint
-- Left executable by PUBLIC (unlike the query functions): whoever may read a per-list view, a role the
-- user granted it to included, must be able to call the functions its columns read through.
COMMENT ON FUNCTION refdata.is_valid_day(integer, integer, integer) IS 'Whether year, month and day name a calendar day (the Gregorian leap rule).';
--> statement-breakpoint
COMMENT ON FUNCTION refdata.as_boolean(jsonb) IS 'The JSON value as boolean when it is one; else NULL (a nonconforming value). Never raises.';
--> statement-breakpoint
COMMENT ON FUNCTION refdata.as_bigint(jsonb) IS 'The JSON value as bigint when it is an integer within bigint''s range; else NULL (a nonconforming value). Never raises.';
--> statement-breakpoint
COMMENT ON FUNCTION refdata.as_numeric(jsonb) IS 'The JSON value as numeric when it is a number; else NULL (a nonconforming value). Never raises.';
--> statement-breakpoint
COMMENT ON FUNCTION refdata.as_text(jsonb) IS 'The JSON value as text when it is a string or a number (its JSON text); else NULL (a nonconforming value). Never raises.';
--> statement-breakpoint
COMMENT ON FUNCTION refdata.as_date(jsonb) IS 'The JSON value as date when it is an ISO-8601 calendar date (YYYY-MM-DD); else NULL (a nonconforming value). Never raises.';
--> statement-breakpoint
COMMENT ON FUNCTION refdata.as_timestamptz(jsonb) IS 'The JSON value as timestamptz when it is an ISO-8601 date-time with an offset (Z or +hh[:mm]); else NULL (a nonconforming value). Never raises.';
--> statement-breakpoint
ALTER TABLE "refdata"."snapshots" ADD COLUMN "nonconforming" integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
COMMENT ON COLUMN refdata.snapshots.nonconforming IS 'Values of the fetch that did not fit the type of their typed column: NULL in that column, kept in payload, listed in the view''s nonconforming column.';
--> statement-breakpoint
-- The views gain a column named nonconforming: a field of that name recorded before keeps a column of its own.
UPDATE refdata.list_columns c SET column_name = 'nonconforming_field'
WHERE c.column_name = 'nonconforming' AND NOT EXISTS (
  SELECT 1 FROM refdata.list_columns o WHERE o.list_key = c.list_key AND o.column_name = 'nonconforming_field' AND o.replaced_at IS NULL);
--> statement-breakpoint
CREATE TABLE "refdata"."list_views_waiting" (
	"list_key" text PRIMARY KEY NOT NULL,
	"since" timestamp with time zone DEFAULT now() NOT NULL,
	"snapshot_id" bigint,
	"views" text[] NOT NULL,
	"dependents" text[] NOT NULL,
	"columns" jsonb DEFAULT '[]'::jsonb NOT NULL
);
--> statement-breakpoint
COMMENT ON TABLE refdata.list_views_waiting IS 'Per-list views that must be re-created to change a column''s type while objects of the user depend on them: the recorded columns (list_columns) already have the change, the views keep their columns until the first sync after the dependents are gone. Never dropped with CASCADE.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.list_views_waiting.list_key IS 'Which reference list (its views refdata.<list_key> and refdata.<list_key>_history).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.list_views_waiting.since IS 'When the change began to wait.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.list_views_waiting.snapshot_id IS 'Snapshot whose sync last found the views blocked.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.list_views_waiting.views IS 'The views that must be re-created.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.list_views_waiting.dependents IS 'The objects that depend on them, as kind and qualified name.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.list_views_waiting.columns IS 'The column changes waiting: field, column, change, from, to.';
--> statement-breakpoint
GRANT SELECT ON refdata.list_views_waiting TO refdata_reader;
--> statement-breakpoint
ALTER TABLE "refdata"."snapshots" ADD COLUMN "reshaped" integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
COMMENT ON COLUMN refdata.snapshots.reshaped IS 'Entries that differ from their previous version only by fields that appeared in or left the list in this snapshot (not counted in modified).';
--> statement-breakpoint
COMMENT ON TABLE refdata.entry_changes IS 'Every detected change of an entry, newest last: added, removed, modified, reappeared or reshaped, with the entry before and after.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.entry_changes.change IS 'added, removed, modified (a field present before and after changed value), reappeared (a key that came back after removal) or reshaped (only fields that appeared in or left the whole list in that snapshot differ).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.entry_changes.changed_fields IS 'For modified and reshaped entries, the top-level fields whose values changed (or appeared, or left).';
--> statement-breakpoint
ALTER TABLE "refdata"."snapshots" ADD COLUMN "schema_accepted" boolean DEFAULT false NOT NULL;
--> statement-breakpoint
COMMENT ON COLUMN refdata.snapshots.schema_accepted IS 'Whether this snapshot applied a change of the list''s columns that its schema policy (REFSYNC_SCHEMA_CHANGES) holds, accepted with --accept-schema.';
