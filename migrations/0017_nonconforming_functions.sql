-- The nonconforming column of each per-list view, a call per typed column: refdata.nonconforming_<type>
-- (column, value) is {column: value} when the value is there (not JSON null, not absent) and does not
-- read as the type, else {}. The views spelled that CASE out for every column: it made most of a view's
-- stored query tree (13.5 of 21.5 KB for equipment_types), which CREATE OR REPLACE VIEW parses, stores
-- compressed and reads back for each view, and a first sync replaces two views per list (bench P1,
-- issue 58: the views' DDL was most of its Postgres CPU). SQL functions, STABLE as the expression is
-- (jsonb_build_object is), so Postgres inlines them where a view is read: the plan is the CASE it was.
-- Views made before keep their spelled-out expression, which gives the same values, until their
-- columns next change.
CREATE FUNCTION refdata.nonconforming_boolean(column_name text, value jsonb) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN jsonb_typeof(value) <> 'null' AND refdata.as_boolean(value) IS NULL THEN jsonb_build_object(column_name, value) ELSE '{}'::jsonb END
$$;
--> statement-breakpoint
CREATE FUNCTION refdata.nonconforming_bigint(column_name text, value jsonb) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN jsonb_typeof(value) <> 'null' AND refdata.as_bigint(value) IS NULL THEN jsonb_build_object(column_name, value) ELSE '{}'::jsonb END
$$;
--> statement-breakpoint
CREATE FUNCTION refdata.nonconforming_numeric(column_name text, value jsonb) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN jsonb_typeof(value) <> 'null' AND refdata.as_numeric(value) IS NULL THEN jsonb_build_object(column_name, value) ELSE '{}'::jsonb END
$$;
--> statement-breakpoint
CREATE FUNCTION refdata.nonconforming_text(column_name text, value jsonb) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN jsonb_typeof(value) <> 'null' AND refdata.as_text(value) IS NULL THEN jsonb_build_object(column_name, value) ELSE '{}'::jsonb END
$$;
--> statement-breakpoint
CREATE FUNCTION refdata.nonconforming_date(column_name text, value jsonb) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN jsonb_typeof(value) <> 'null' AND refdata.as_date(value) IS NULL THEN jsonb_build_object(column_name, value) ELSE '{}'::jsonb END
$$;
--> statement-breakpoint
CREATE FUNCTION refdata.nonconforming_timestamptz(column_name text, value jsonb) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN jsonb_typeof(value) <> 'null' AND refdata.as_timestamptz(value) IS NULL THEN jsonb_build_object(column_name, value) ELSE '{}'::jsonb END
$$;
--> statement-breakpoint
-- Executable by whoever may read a per-list view, as the as_* functions its columns read through (0009).
GRANT EXECUTE ON FUNCTION refdata.nonconforming_boolean(text, jsonb), refdata.nonconforming_bigint(text, jsonb),
  refdata.nonconforming_numeric(text, jsonb), refdata.nonconforming_text(text, jsonb), refdata.nonconforming_date(text, jsonb),
  refdata.nonconforming_timestamptz(text, jsonb) TO refdata_reader;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.nonconforming_boolean(text, jsonb) IS '{column_name: value} when value is present (not JSON null) and not a boolean; else {}. A term of a per-list view''s nonconforming column.';
--> statement-breakpoint
COMMENT ON FUNCTION refdata.nonconforming_bigint(text, jsonb) IS '{column_name: value} when value is present (not JSON null) and not an integer within bigint''s range; else {}. A term of a per-list view''s nonconforming column.';
--> statement-breakpoint
COMMENT ON FUNCTION refdata.nonconforming_numeric(text, jsonb) IS '{column_name: value} when value is present (not JSON null) and not a number; else {}. A term of a per-list view''s nonconforming column.';
--> statement-breakpoint
COMMENT ON FUNCTION refdata.nonconforming_text(text, jsonb) IS '{column_name: value} when value is present (not JSON null) and neither a string nor a number; else {}. A term of a per-list view''s nonconforming column.';
--> statement-breakpoint
COMMENT ON FUNCTION refdata.nonconforming_date(text, jsonb) IS '{column_name: value} when value is present (not JSON null) and not an ISO-8601 calendar date; else {}. A term of a per-list view''s nonconforming column.';
--> statement-breakpoint
COMMENT ON FUNCTION refdata.nonconforming_timestamptz(text, jsonb) IS '{column_name: value} when value is present (not JSON null) and not an ISO-8601 timestamp with a zone; else {}. A term of a per-list view''s nonconforming column.';
