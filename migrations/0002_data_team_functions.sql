-- Functions for data teams (as-of reads, charge-code version diff) and the reader role's limits.
-- The functions are plain SQL, STABLE, SECURITY INVOKER and without SET clauses, so the planner can
-- inline them into the calling query (a LATERAL join per fact row then uses the entries indexes),
-- and a caller reads only what its own privileges allow.
CREATE FUNCTION refdata.entries_as_of(
  p_list_key text,
  p_at timestamptz,
  p_variant text DEFAULT NULL,
  p_environment text DEFAULT NULL
)
RETURNS TABLE (
  environment text,
  list_key text,
  variant text,
  entry_key text,
  code text,
  description text,
  payload jsonb,
  valid_from timestamptz,
  valid_to timestamptz
)
LANGUAGE sql
STABLE
PARALLEL SAFE
AS $$
  SELECT e.environment, e.list_key, e.variant, e.entry_key, e.code, e.description, e.payload, e.valid_from, e.valid_to
  FROM refdata.entries e
  WHERE e.list_key = p_list_key
    AND (p_variant IS NULL OR e.variant = p_variant)
    AND (p_environment IS NULL OR e.environment = p_environment)
    AND e.valid_from <= p_at
    AND (e.valid_to IS NULL OR e.valid_to > p_at)
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.entries_as_of(text, timestamptz, text, text) IS 'The entries of one list as they were at time p_at (valid_from <= p_at < valid_to): one row per entry that existed then, in the version current then. p_variant (the carrier, or the charge-code version) and p_environment narrow it; null means every variant or environment. Example: select * from refdata.entries_as_of(''accessorials'', ''2025-01-31 12:00+00'').';
--> statement-breakpoint
CREATE FUNCTION refdata.charge_codes_as_of(
  p_at timestamptz,
  p_version text DEFAULT 'unpinned',
  p_environment text DEFAULT NULL
)
RETURNS TABLE (
  environment text,
  version text,
  entry_key text,
  code text,
  description text,
  payload jsonb,
  valid_from timestamptz,
  valid_to timestamptz
)
LANGUAGE sql
STABLE
PARALLEL SAFE
AS $$
  SELECT e.environment, e.variant, e.entry_key, e.code, e.description, e.payload, e.valid_from, e.valid_to
  FROM refdata.entries e
  WHERE e.list_key = 'charge_codes'
    AND e.variant = p_version
    AND (p_environment IS NULL OR e.environment = p_environment)
    AND e.valid_from <= p_at
    AND (e.valid_to IS NULL OR e.valid_to > p_at)
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.charge_codes_as_of(timestamptz, text, text) IS 'The charge codes of one version (default unpinned) as they were at time p_at. To join facts on the codes valid at each fact''s date: from charges f cross join lateral refdata.charge_codes_as_of(f.charged_at, ''2024-06-11'') c where c.code = f.charge_code.';
--> statement-breakpoint
CREATE FUNCTION refdata.charge_code_version_diff(
  p_a text,
  p_b text,
  p_environment text DEFAULT NULL
)
RETURNS TABLE (
  environment text,
  code text,
  change text,
  description_a text,
  description_b text,
  payload_a jsonb,
  payload_b jsonb,
  changed_fields text[]
)
LANGUAGE sql
STABLE
PARALLEL SAFE
AS $$
  WITH a AS (
    SELECT c.environment, c.entry_key, c.description, c.payload
    FROM refdata.current_entries c
    WHERE c.list_key = 'charge_codes' AND c.variant = p_a
      AND (p_environment IS NULL OR c.environment = p_environment)
  ),
  b AS (
    SELECT c.environment, c.entry_key, c.description, c.payload
    FROM refdata.current_entries c
    WHERE c.list_key = 'charge_codes' AND c.variant = p_b
      AND (p_environment IS NULL OR c.environment = p_environment)
  ),
  -- Only environments that hold both versions: where one was never synced, "every code is only
  -- in the other" would describe the sync settings, not the versions.
  both_envs AS (
    SELECT environment FROM a INTERSECT SELECT environment FROM b
  )
  SELECT
    coalesce(a.environment, b.environment),
    coalesce(a.entry_key, b.entry_key),
    CASE WHEN b.entry_key IS NULL THEN 'only_in_a' WHEN a.entry_key IS NULL THEN 'only_in_b' ELSE 'changed' END,
    a.description,
    b.description,
    a.payload,
    b.payload,
    CASE WHEN a.entry_key IS NOT NULL AND b.entry_key IS NOT NULL THEN
      ARRAY(
        SELECT k
        FROM (SELECT jsonb_object_keys(a.payload) UNION SELECT jsonb_object_keys(b.payload)) AS keys(k)
        WHERE a.payload -> k IS DISTINCT FROM b.payload -> k
        ORDER BY k
      )
    END
  FROM a
  FULL JOIN b ON b.environment = a.environment AND b.entry_key = a.entry_key
  WHERE coalesce(a.environment, b.environment) IN (SELECT environment FROM both_envs)
    AND (a.entry_key IS NULL OR b.entry_key IS NULL OR a.payload IS DISTINCT FROM b.payload)
  ORDER BY 1, 3, 2
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.charge_code_version_diff(text, text, text) IS 'How the current charge codes of version p_b differ from those of version p_a (versions as in refdata.charge_codes.version), per environment that holds both: change is only_in_a, only_in_b or changed; changed_fields names the top-level fields whose values differ (null unless changed). Example: select * from refdata.charge_code_version_diff(''2024-06-11'', ''2025-09-01'').';
--> statement-breakpoint
-- Functions are executable by PUBLIC by default; keep them to the reader role (and the owner).
REVOKE EXECUTE ON FUNCTION refdata.entries_as_of(text, timestamptz, text, text) FROM PUBLIC;
--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION refdata.charge_codes_as_of(timestamptz, text, text) FROM PUBLIC;
--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION refdata.charge_code_version_diff(text, text, text) FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION refdata.entries_as_of(text, timestamptz, text, text) TO refdata_reader;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION refdata.charge_codes_as_of(timestamptz, text, text) TO refdata_reader;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION refdata.charge_code_version_diff(text, text, text) TO refdata_reader;
--> statement-breakpoint
-- The reader reads, nothing else: no object creation in refdata (a new schema grants PUBLIC nothing,
-- but a database whose owner loosened it keeps working as documented), no writes through any
-- earlier or later grant on the tables, and no use of the id sequences.
REVOKE CREATE ON SCHEMA refdata FROM PUBLIC;
--> statement-breakpoint
REVOKE CREATE ON SCHEMA refdata FROM refdata_reader;
--> statement-breakpoint
REVOKE INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER ON ALL TABLES IN SCHEMA refdata FROM refdata_reader;
--> statement-breakpoint
REVOKE ALL ON ALL SEQUENCES IN SCHEMA refdata FROM refdata_reader;
