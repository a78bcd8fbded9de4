-- refdata.record_unchanged_lists as three set statements, where it was three statements per list.
--
-- The call records a run job's unchanged lists (migration 0013; the served digest since 0014), and
-- an hourly slot of a fleet makes one per source. It looped over the lists: per list a try of its
-- lock, a call of refdata.target_state (the list's last ok snapshot, and whether its views wait) and
-- an insert of the snapshot. The same work as a set: every lock tried in one statement, then in the
-- next every snapshot inserted by one insert that reads each list's last ok snapshot and its views'
-- wait itself. Measured alone on one connection, 100 calls of 23 lists, thirteen pairs alternating:
-- 180-396 ms as a loop, 127-232 ms as a set, the set faster in eleven (docs/performance-log-2026-11.md,
-- issue 58, eighth session).
--
-- What it records is unchanged: a list whose lock is taken (only tried, never waited for), whose
-- last ok snapshot has another hash by now, or whose views wait gets a null snapshot id and nothing
-- written. The insert is a statement of its own after the locks, so it sees the commit of the sync
-- that held each lock last. The snapshots' ids follow the lists' order. One row per list given, in
-- its order (a list given twice is recorded twice, and both rows name the later snapshot).
CREATE OR REPLACE FUNCTION refdata.record_unchanged_lists(p_environment text, p_run_id bigint, p_lists jsonb)
RETURNS TABLE (list_key text, variant text, snapshot_id bigint)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  v_locked bigint[];
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  SELECT coalesce(array_agg(l.ord), '{}') INTO v_locked
  FROM jsonb_array_elements(p_lists) WITH ORDINALITY AS l(list, ord)
  WHERE pg_try_advisory_xact_lock(refdata.target_lock_key(p_environment, l.list ->> 'list_key', l.list ->> 'variant'));
  RETURN QUERY
  WITH lists AS (
    SELECT l.ord, l.list_key, l.variant, l.content_hash, l.entry_count, l.fields, l.pages, l.duration_ms, l.replaced_values, l.served_digest
    FROM ROWS FROM (jsonb_to_recordset(p_lists) AS (list_key text, variant text, content_hash text, entry_count integer, fields text[],
                                                    pages integer, duration_ms integer, replaced_values integer, served_digest text))
         WITH ORDINALITY AS l(list_key, variant, content_hash, entry_count, fields, pages, duration_ms, replaced_values, served_digest, ord)
  ), recorded AS (
    INSERT INTO refdata.snapshots
      (run_id, environment, list_key, variant, fetched_at, status, content_hash, entry_count, changed,
       added, removed, modified, reappeared, error, error_code, fields, pages, duration_ms, replaced_values,
       nonconforming, reshaped, schema_accepted, served_digest)
    SELECT p_run_id, p_environment, l.list_key, l.variant, clock_timestamp(), 'ok', l.content_hash, l.entry_count, false,
           0, 0, 0, 0, NULL, NULL, l.fields, l.pages, l.duration_ms, l.replaced_values,
           coalesce(last_ok.nonconforming, 0), 0, false, l.served_digest
    FROM lists l
    CROSS JOIN LATERAL (SELECT s.content_hash, s.nonconforming FROM refdata.snapshots s
                        WHERE s.environment = p_environment AND s.list_key = l.list_key AND s.variant = l.variant AND s.status = 'ok'
                        ORDER BY s.id DESC LIMIT 1) last_ok
    WHERE l.ord = ANY (v_locked) AND last_ok.content_hash = l.content_hash
      AND NOT EXISTS (SELECT 1 FROM refdata.list_views_waiting w WHERE w.list_key = l.list_key)
    ORDER BY l.ord
    RETURNING list_key, variant, id
  )
  SELECT l.list_key, l.variant, (SELECT max(r.id) FROM recorded r WHERE r.list_key = l.list_key AND r.variant = l.variant)
  FROM lists l ORDER BY l.ord;
END;
$$;
