-- One writer of a snapshot row, and one of the unchanged record.
--
-- Seven INSERTs into refdata.snapshots had grown apart (only some wrote served_digest). Every snapshot
-- row now goes through refdata.write_snapshots: the TypeScript loads call it (src/sync/sql.ts
-- insertSnapshots, and insertSnapshot as a batch of one), and so does refdata.record_unchanged_lists,
-- which stays in SQL so that recording unchanged lists is one statement, one round trip.
--
-- refdata.record_unchanged_lists is the only writer of the unchanged record: a target job's single
-- list is a batch of one (src/sync/batch/apply-batch.ts). What refdata.record_unchanged did for
-- it, counting the run's progress in the same statement, is its new p_advance_run (false unless
-- given, as a run's batch counts its progress once, after its last list). The opening of
-- an apply no longer records anything (refdata.lock_target_state_or_record_unchanged): the apply's
-- unchanged branch writes the row through the same writer (src/sync/load/resync-apply.ts). Nothing
-- calls those two single-list writers any more: migration 0021 drops them.

-- Inserts snapshot rows given as a JSON array of objects, one per row, keyed by column, of one
-- environment. A row without an id takes the next one, a row without fetched_at the statement's
-- clock. Rows are inserted in their ids' order (reserved ids), else in the order given. One row back
-- per row written: its list, variant and id.
CREATE FUNCTION refdata.write_snapshots(p_environment text, p_rows jsonb)
RETURNS TABLE (list_key text, variant text, id bigint)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
  INSERT INTO refdata.snapshots
    (id, run_id, environment, list_key, variant, fetched_at, status, content_hash, entry_count, changed,
     added, removed, modified, reappeared, reshaped, error, error_code, fields, pages, duration_ms, replaced_values,
     nonconforming, schema_accepted, served_digest)
  SELECT coalesce(s.id, nextval(pg_get_serial_sequence('refdata.snapshots', 'id'))), s.run_id, p_environment, s.list_key, s.variant,
         coalesce(s.fetched_at, clock_timestamp()), s.status, s.content_hash, s.entry_count, s.changed,
         s.added, s.removed, s.modified, s.reappeared, s.reshaped, s.error, s.error_code, s.fields, s.pages, s.duration_ms, s.replaced_values,
         s.nonconforming, s.schema_accepted, s.served_digest
  FROM ROWS FROM (jsonb_to_recordset(p_rows) AS (id bigint, run_id bigint, list_key text, variant text, fetched_at timestamptz, status text,
                  content_hash text, entry_count integer, changed boolean, added integer, removed integer, modified integer, reappeared integer,
                  reshaped integer, error text, error_code text, fields text[], pages integer, duration_ms integer, replaced_values integer,
                  nonconforming integer, schema_accepted boolean, served_digest text))
       WITH ORDINALITY AS s(id, run_id, list_key, variant, fetched_at, status, content_hash, entry_count, changed, added, removed, modified,
                            reappeared, reshaped, error, error_code, fields, pages, duration_ms, replaced_values, nonconforming,
                            schema_accepted, served_digest, ord)
  ORDER BY s.id, s.ord
  RETURNING list_key, variant, id;
END;
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.write_snapshots(text, jsonb) IS 'Inserts snapshot rows given as JSON: the one writer of refdata.snapshots (refsync internal).';
--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION refdata.write_snapshots(text, jsonb) FROM PUBLIC;
--> statement-breakpoint
-- What it records is what migration 0018's set did: each list's lock only tried, and a list whose
-- lock is taken, whose last ok snapshot has another hash by now, or whose views wait gets a null
-- snapshot id and nothing written. Its snapshot is the fetch's, unchanged, with its served digest and
-- the last ok snapshot's nonconforming count. With p_advance_run (a worker's target job), once a list
-- is recorded the same statement brings the run's progress up to date (refdata.advance_run), and its
-- commit then waits for the WAL flush: it is the one that makes the job's work durable. Without it
-- (a run's lists, counted by the caller right after), the commit does not wait (docs/reliability.md).
DROP FUNCTION refdata.record_unchanged_lists(text, bigint, jsonb);
--> statement-breakpoint
CREATE FUNCTION refdata.record_unchanged_lists(p_environment text, p_run_id bigint, p_lists jsonb, p_advance_run boolean DEFAULT false)
RETURNS TABLE (list_key text, variant text, snapshot_id bigint, run_advanced boolean)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  v_locked bigint[];
  v_list_keys text[];
  v_variants text[];
  v_ids bigint[];
  v_advanced boolean := false;
BEGIN
  IF NOT p_advance_run THEN
    PERFORM set_config('synchronous_commit', 'off', true);
  END IF;
  SELECT coalesce(array_agg(l.ord), '{}') INTO v_locked
  FROM jsonb_array_elements(p_lists) WITH ORDINALITY AS l(list, ord)
  WHERE pg_try_advisory_xact_lock(refdata.target_lock_key(p_environment, l.list ->> 'list_key', l.list ->> 'variant'));
  -- A statement of its own after the locks: it sees the commit of the sync that held each lock last.
  -- What it hands refdata.write_snapshots is read in its own snapshot; the insert then runs as a
  -- statement of that function.
  SELECT array_agg(w.list_key), array_agg(w.variant), array_agg(w.id) INTO v_list_keys, v_variants, v_ids
  FROM refdata.write_snapshots(p_environment, (
    SELECT jsonb_agg(jsonb_build_object(
             'run_id', p_run_id, 'list_key', l.list ->> 'list_key', 'variant', l.list ->> 'variant', 'status', 'ok',
             'content_hash', l.list ->> 'content_hash', 'entry_count', l.list -> 'entry_count', 'changed', false,
             'added', 0, 'removed', 0, 'modified', 0, 'reappeared', 0, 'reshaped', 0, 'fields', l.list -> 'fields',
             'pages', l.list -> 'pages', 'duration_ms', l.list -> 'duration_ms', 'replaced_values', l.list -> 'replaced_values',
             'nonconforming', coalesce(last_ok.nonconforming, 0), 'schema_accepted', false, 'served_digest', l.list -> 'served_digest')
           ORDER BY l.ord)
    FROM jsonb_array_elements(p_lists) WITH ORDINALITY AS l(list, ord)
    CROSS JOIN LATERAL (SELECT s.content_hash, s.nonconforming FROM refdata.snapshots s
                        WHERE s.environment = p_environment AND s.list_key = l.list ->> 'list_key' AND s.variant = l.list ->> 'variant'
                          AND s.status = 'ok'
                        ORDER BY s.id DESC LIMIT 1) last_ok
    WHERE l.ord = ANY (v_locked) AND last_ok.content_hash = l.list ->> 'content_hash'
      AND NOT EXISTS (SELECT 1 FROM refdata.list_views_waiting w WHERE w.list_key = l.list ->> 'list_key'))) w;
  -- A statement after the insert: the run's count sees the snapshots just written.
  IF v_ids IS NOT NULL AND p_advance_run AND p_run_id IS NOT NULL THEN
    v_advanced := refdata.advance_run(p_run_id);
  END IF;
  -- One row per list given, in its order; a list given twice names its later snapshot in both rows.
  RETURN QUERY
  SELECT l.list_key, l.variant, r.id, v_advanced
  FROM ROWS FROM (jsonb_to_recordset(p_lists) AS (list_key text, variant text)) WITH ORDINALITY AS l(list_key, variant, ord)
  LEFT JOIN (SELECT u.list_key, u.variant, max(u.id) AS id FROM unnest(v_list_keys, v_variants, v_ids) AS u(list_key, variant, id)
             GROUP BY u.list_key, u.variant) r ON r.list_key = l.list_key AND r.variant = l.variant
  ORDER BY l.ord;
END;
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.record_unchanged_lists(text, bigint, jsonb, boolean) IS 'Records the unchanged fetches of one run''s lists in one statement, each only if its lock is free, and the run''s progress with them when asked (refsync internal).';
--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION refdata.record_unchanged_lists(text, bigint, jsonb, boolean) FROM PUBLIC;
