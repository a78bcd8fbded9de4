-- Before the first sync: the as-of functions gain p_extend_back (default false, strict). When true,
-- a time before a list's first sync reads the versions that first sync recorded, rather than an
-- empty list: facts dated before refsync first saw a list then still join. A first-recorded version
-- is one whose first_snapshot_id is the target's first ok snapshot. Same result columns; the old
-- three- and four-argument calls keep working through the defaults.
DROP FUNCTION refdata.entries_as_of(text, timestamptz, text, text);
--> statement-breakpoint
CREATE FUNCTION refdata.entries_as_of(
  p_list_key text,
  p_at timestamptz,
  p_variant text DEFAULT NULL,
  p_environment text DEFAULT NULL,
  p_extend_back boolean DEFAULT false
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
    AND (e.valid_to IS NULL OR e.valid_to > p_at)
    AND (e.valid_from <= p_at OR (p_extend_back AND e.first_snapshot_id = (
      SELECT min(s.id) FROM refdata.snapshots s
      WHERE s.environment = e.environment AND s.list_key = e.list_key AND s.variant = e.variant AND s.status = 'ok')))
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.entries_as_of(text, timestamptz, text, text, boolean) IS 'The entries of one list as they were at time p_at (valid_from <= p_at < valid_to): one row per entry that existed then, in the version current then. p_variant (the carrier, or the charge-code version) and p_environment narrow it; null means every variant or environment. p_extend_back (default false): for a time before the list''s first sync (refdata.list_sync_times.first_synced_at), read the versions that first sync recorded instead of nothing. Example: select * from refdata.entries_as_of(''accessorials'', ''2025-01-31 12:00+00'').';
--> statement-breakpoint
-- charge_codes_as_of becomes the typed as-of function of its list, like every other list's
-- refdata.<list>_as_of: it returns the rows of refdata.charge_codes_history (its former columns
-- first, then the typed ones). That return type needs the view, so the function is created with
-- the per-list views, right after the migrations (src/columns/as-of-function.ts).
DROP FUNCTION refdata.charge_codes_as_of(timestamptz, text, text);
--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION refdata.entries_as_of(text, timestamptz, text, text, boolean) FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION refdata.entries_as_of(text, timestamptz, text, text, boolean) TO refdata_reader;
--> statement-breakpoint
-- The top-level fields whose values differ between two versions of an entry, sorted: the
-- changed_fields of every diff. IMMUTABLE plain SQL, so the planner inlines it.
CREATE FUNCTION refdata.changed_fields(p_before jsonb, p_after jsonb)
RETURNS text[]
LANGUAGE sql
IMMUTABLE
PARALLEL SAFE
AS $$
  SELECT ARRAY(
    SELECT k
    FROM (SELECT jsonb_object_keys(p_before) UNION SELECT jsonb_object_keys(p_after)) AS keys(k)
    WHERE p_before -> k IS DISTINCT FROM p_after -> k
    ORDER BY k
  )
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.changed_fields(jsonb, jsonb) IS 'The top-level fields whose values differ between two versions of an entry (payloads as served), sorted: what changed_fields holds in every diff.';
--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION refdata.changed_fields(jsonb, jsonb) FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION refdata.changed_fields(jsonb, jsonb) TO refdata_reader;
--> statement-breakpoint
-- One diff language everywhere: the charge-code version diff says added (only in B), removed (only
-- in A) and modified, as entry_changes, NOTIFY, impact pin and the list diff below do. Its earlier
-- labels (only_in_b, only_in_a, changed) are gone; CHANGELOG.md's upgrade notes say so. Same
-- signature and result columns, so CREATE OR REPLACE keeps grants and dependents.
CREATE OR REPLACE FUNCTION refdata.charge_code_version_diff(
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
    CASE WHEN b.entry_key IS NULL THEN 'removed' WHEN a.entry_key IS NULL THEN 'added' ELSE 'modified' END,
    a.description,
    b.description,
    a.payload,
    b.payload,
    CASE WHEN a.entry_key IS NOT NULL AND b.entry_key IS NOT NULL THEN refdata.changed_fields(a.payload, b.payload) END
  FROM a
  FULL JOIN b ON b.environment = a.environment AND b.entry_key = a.entry_key
  WHERE coalesce(a.environment, b.environment) IN (SELECT environment FROM both_envs)
    AND (a.entry_key IS NULL OR b.entry_key IS NULL OR a.payload IS DISTINCT FROM b.payload)
  ORDER BY 1, 3, 2
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.charge_code_version_diff(text, text, text) IS 'How the current charge codes of version p_b differ from those of version p_a (versions as in refdata.charge_codes.version), per environment that holds both: change is added (only in p_b), removed (only in p_a) or modified; changed_fields names the top-level fields whose values differ (null unless modified). Example: select * from refdata.charge_code_version_diff(''2024-06-11'', ''2025-09-01'').';
--> statement-breakpoint
-- Any list between two times: its state at p_from against its state at p_to (each read as
-- entries_as_of reads it), per environment and variant. Plain SQL and STABLE like the as-of
-- functions, so it inlines and each side uses the entries indexes.
CREATE FUNCTION refdata.entries_diff(
  p_list_key text,
  p_from timestamptz,
  p_to timestamptz DEFAULT now(),
  p_variant text DEFAULT NULL,
  p_environment text DEFAULT NULL
)
RETURNS TABLE (
  environment text,
  list_key text,
  variant text,
  entry_key text,
  change text,
  code text,
  description_before text,
  description_after text,
  before jsonb,
  after jsonb,
  changed_fields text[]
)
LANGUAGE sql
STABLE
PARALLEL SAFE
AS $$
  WITH a AS (
    SELECT * FROM refdata.entries_as_of(p_list_key, p_from, p_variant, p_environment)
  ),
  b AS (
    SELECT * FROM refdata.entries_as_of(p_list_key, p_to, p_variant, p_environment)
  )
  SELECT
    coalesce(a.environment, b.environment),
    p_list_key,
    coalesce(a.variant, b.variant),
    coalesce(a.entry_key, b.entry_key),
    CASE WHEN a.entry_key IS NULL THEN 'added' WHEN b.entry_key IS NULL THEN 'removed' ELSE 'modified' END,
    coalesce(b.code, a.code),
    a.description,
    b.description,
    a.payload,
    b.payload,
    CASE WHEN a.entry_key IS NOT NULL AND b.entry_key IS NOT NULL THEN refdata.changed_fields(a.payload, b.payload) END
  FROM a
  FULL JOIN b ON b.environment = a.environment AND b.variant = a.variant AND b.entry_key = a.entry_key
  WHERE a.entry_key IS NULL OR b.entry_key IS NULL OR a.payload IS DISTINCT FROM b.payload
  ORDER BY 1, 3, 5, 4
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.entries_diff(text, timestamptz, timestamptz, text, text) IS 'What changed in one list between p_from and p_to (default now): change is added (not there at p_from), removed (gone by p_to) or modified (there at both, payload differs), with before and after as served and changed_fields naming the top-level fields whose values differ. Entries that only changed and changed back do not appear. A time before the list''s first sync sees an empty list: compare with min(fetched_at) of refdata.snapshots. Example: select * from refdata.entries_diff(''accessorials'', ''2026-03-01'', ''2026-06-01'').';
--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION refdata.entries_diff(text, timestamptz, timestamptz, text, text) FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION refdata.entries_diff(text, timestamptz, timestamptz, text, text) TO refdata_reader;
--> statement-breakpoint
-- When each list variant was first and last synced: what freshness checks (dbt's loaded_at) and
-- "before the first sync" questions read. The last success comes from target_last_ok (kept by a
-- trigger, so it moves with every ok snapshot, unchanged ones included); the first from the oldest
-- ok snapshot, which retention keeps while history rows point at it.
CREATE VIEW refdata.list_sync_times AS
SELECT t.environment, t.list_key, t.variant,
  (SELECT min(s.fetched_at) FROM refdata.snapshots s
    WHERE s.environment = t.environment AND s.list_key = t.list_key AND s.variant = t.variant AND s.status = 'ok') AS first_synced_at,
  t.fetched_at AS last_synced_at,
  t.entry_count
FROM refdata.target_last_ok t;
--> statement-breakpoint
COMMENT ON VIEW refdata.list_sync_times IS 'When each list variant was first and last synced successfully (unchanged fetches included): the loaded_at of freshness checks, and where the recorded history of a list begins.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.list_sync_times.environment IS 'Environment label of the source.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.list_sync_times.list_key IS 'Which reference list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.list_sync_times.variant IS ''''' for plain lists; the carrier for carrier_package_types; the version for charge_codes.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.list_sync_times.first_synced_at IS 'The first successful sync: before it, refsync recorded nothing of this list variant.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.list_sync_times.last_synced_at IS 'The last successful sync, changed or not.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.list_sync_times.entry_count IS 'Entries in the last successful sync.';
--> statement-breakpoint
GRANT SELECT ON refdata.list_sync_times TO refdata_reader;
