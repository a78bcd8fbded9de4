-- An unchanged target in one statement: no BEGIN, no COMMIT of its own.
--
-- refdata.record_unchanged is sent on its own, as an implicit transaction: the target's lock, its
-- state, and, when the fetched content hash is the last ok snapshot's and the list's views do not
-- wait, the snapshot row, written and committed by that one statement. For a worker's target job it
-- also brings the run's progress up to date (p_advance_run), as refdata.advance_run does in a
-- statement of its own: an unchanged target job of the hourly slot makes one round trip to Postgres
-- where it made three (the opening with the BEGIN, the commit, advance_run). Anything else (a fetch
-- that differs, views that wait) writes nothing, returns a null snapshot id, and releases the lock
-- with the statement: the apply then opens its own transaction as before.
--
-- The snapshot is the one an unchanged apply has always written (lock_target_state_or_record_unchanged,
-- migration 0011). Its commit waits for the WAL flush only when the run's progress is counted with
-- it: that commit is then the one that makes the job's work durable before the job completes.
-- Without it (a CLI run refreshes once, at its end), the run's refresh flushes it, as before.
CREATE FUNCTION refdata.record_unchanged(
  p_environment text, p_list_key text, p_variant text, p_content_hash text, p_run_id bigint,
  p_entry_count integer, p_fields text[], p_pages integer, p_duration_ms integer, p_replaced_values integer,
  p_advance_run boolean)
RETURNS TABLE (snapshot_id bigint, run_advanced boolean)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_state record;
  v_id bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(refdata.target_lock_key(p_environment, p_list_key, p_variant));
  -- A statement of its own after the lock: it sees the commit the lock waited for.
  SELECT * INTO v_state FROM refdata.target_state(p_environment, p_list_key, p_variant);
  IF v_state.views_waiting OR v_state.last_ok IS NULL OR v_state.last_ok ->> 'content_hash' IS DISTINCT FROM p_content_hash THEN
    RETURN QUERY SELECT NULL::bigint, false;
    RETURN;
  END IF;
  IF NOT p_advance_run THEN
    PERFORM set_config('synchronous_commit', 'off', true);
  END IF;
  INSERT INTO refdata.snapshots
    (run_id, environment, list_key, variant, fetched_at, status, content_hash, entry_count, changed,
     added, removed, modified, reappeared, error, error_code, fields, pages, duration_ms, replaced_values,
     nonconforming, reshaped, schema_accepted)
  VALUES
    (p_run_id, p_environment, p_list_key, p_variant, v_state.now, 'ok', p_content_hash, p_entry_count, false,
     0, 0, 0, 0, NULL, NULL, p_fields, p_pages, p_duration_ms, p_replaced_values,
     coalesce((v_state.last_ok ->> 'nonconforming')::integer, 0), 0, false)
  RETURNING id INTO v_id;
  RETURN QUERY SELECT v_id, CASE WHEN p_advance_run AND p_run_id IS NOT NULL THEN refdata.advance_run(p_run_id) ELSE false END;
END;
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.record_unchanged(text, text, text, text, bigint, integer, text[], integer, integer, integer, boolean) IS 'Records an unchanged fetch''s snapshot in one statement, and the run''s progress with it when asked (refsync internal).';
--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION refdata.record_unchanged(text, text, text, text, bigint, integer, text[], integer, integer, integer, boolean) FROM PUBLIC;
--> statement-breakpoint
-- The run row's lock is now FOR NO KEY UPDATE (was FOR UPDATE). record_unchanged counts the run in the
-- transaction that inserted a snapshot of it, which holds the foreign key's KEY SHARE lock on the run
-- row: FOR UPDATE conflicts with KEY SHARE, so two such transactions, each holding its share and
-- waiting for the other's, would deadlock. FOR NO KEY UPDATE conflicts with itself (callers still
-- take turns, and the last one sees every snapshot committed before it) and with UPDATE, which is all
-- the count needs; snapshots keep being inserted beside it, as they always could between two counts.
CREATE OR REPLACE FUNCTION refdata.run_progress(p_run_id bigint)
RETURNS TABLE (status text, targets_total integer, done integer, failed integer, problems text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  v_status text;
  v_total integer;
BEGIN
  SELECT r.status, r.targets_total INTO v_status, v_total FROM refdata.sync_runs r WHERE r.id = p_run_id FOR NO KEY UPDATE;
  IF NOT FOUND THEN RETURN; END IF;
  IF v_status <> 'running' THEN
    RETURN QUERY SELECT v_status, v_total, NULL::integer, NULL::integer, NULL::text;
    RETURN;
  END IF;
  RETURN QUERY
    WITH per_target AS (
      SELECT s.list_key, s.variant, bool_or(s.status = 'ok') AS ok,
             string_agg(DISTINCT CASE WHEN s.status <> 'ok' THEN s.list_key || CASE WHEN s.variant <> '' THEN '/' || s.variant ELSE '' END
                                      || ' (' || s.status || coalesce(': ' || left(s.error, 120), '') || ')' END, '; ') AS problem
      FROM refdata.snapshots s WHERE s.run_id = p_run_id GROUP BY s.list_key, s.variant)
    SELECT v_status, v_total, count(*)::integer, (count(*) FILTER (WHERE NOT p.ok))::integer,
           string_agg(p.problem, '; ' ORDER BY p.list_key, p.variant)
    FROM per_target p;
END;
$$;
