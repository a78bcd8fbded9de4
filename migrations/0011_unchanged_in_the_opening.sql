-- Two calls that spare every unchanged target a round trip or more.
--
-- An unchanged sync recorded by the statement that opens its apply: the target's lock, its state,
-- and, when the fetched content hash is the last ok snapshot's (and the list's views do not wait),
-- the snapshot row, in one call sent with the BEGIN. The unchanged case is every target of every
-- hourly slot; it took three round trips (the opening, the insert, the commit) and now takes two.
-- A fetch that differs gets the state alone, as from refdata.lock_target_state, and its apply goes
-- on in the same transaction: nothing is spent on a changed list.
--
-- The snapshot is the one an unchanged apply has always written: status ok, nothing counted, the
-- last ok snapshot's nonconforming count, stamped with the clock read after the lock. Its commit
-- does not wait for the WAL flush (synchronous_commit off for this transaction only): it is one
-- snapshot row no data depends on, and the run's refresh flushes it (docs/reliability.md).
CREATE FUNCTION refdata.lock_target_state_or_record_unchanged(
  p_environment text, p_list_key text, p_variant text, p_content_hash text, p_run_id bigint,
  p_entry_count integer, p_fields text[], p_pages integer, p_duration_ms integer, p_replaced_values integer)
RETURNS TABLE (now timestamptz, views_waiting boolean, last_ok jsonb, last jsonb, unchanged_snapshot_id bigint)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_state record;
  v_id bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(refdata.target_lock_key(p_environment, p_list_key, p_variant));
  -- A statement of its own after the lock: it sees the commit the lock waited for.
  SELECT * INTO v_state FROM refdata.target_state(p_environment, p_list_key, p_variant);
  IF NOT v_state.views_waiting AND v_state.last_ok IS NOT NULL AND v_state.last_ok ->> 'content_hash' = p_content_hash THEN
    PERFORM set_config('synchronous_commit', 'off', true);
    INSERT INTO refdata.snapshots
      (run_id, environment, list_key, variant, fetched_at, status, content_hash, entry_count, changed,
       added, removed, modified, reappeared, error, error_code, fields, pages, duration_ms, replaced_values,
       nonconforming, reshaped, schema_accepted)
    VALUES
      (p_run_id, p_environment, p_list_key, p_variant, v_state.now, 'ok', p_content_hash, p_entry_count, false,
       0, 0, 0, 0, NULL, NULL, p_fields, p_pages, p_duration_ms, p_replaced_values,
       coalesce((v_state.last_ok ->> 'nonconforming')::integer, 0), 0, false)
    RETURNING id INTO v_id;
  END IF;
  RETURN QUERY SELECT v_state.now, v_state.views_waiting, v_state.last_ok, v_state.last, v_id;
END;
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.lock_target_state_or_record_unchanged(text, text, text, text, bigint, integer, text[], integer, integer, integer) IS 'Locks a target, reads its state, and records an unchanged fetch''s snapshot (refsync internal).';
--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION refdata.lock_target_state_or_record_unchanged(text, text, text, text, bigint, integer, text[], integer, integer, integer) FROM PUBLIC;

--> statement-breakpoint
-- A run's progress brought up to date in one statement, while the run goes on and none of its
-- targets failed: what every target job of a run but its last asks. It locks the run row and counts
-- as refdata.run_progress does, and sets targets_done. Any other case (the last target, a failure, a
-- run no longer running) it leaves alone and returns false: the caller's transaction then closes the
-- run or words its error, as before. Three round trips (BEGIN with the count, the update, the commit)
-- become one for all but one target of a run.
CREATE FUNCTION refdata.advance_run(p_run_id bigint) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v record;
BEGIN
  SELECT * INTO v FROM refdata.run_progress(p_run_id);
  IF NOT FOUND OR v.status <> 'running' OR v.failed > 0 OR v.done >= v.targets_total THEN
    RETURN false;
  END IF;
  UPDATE refdata.sync_runs SET targets_done = v.done, targets_failed = 0, error = NULL WHERE id = p_run_id;
  RETURN true;
END;
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.advance_run(bigint) IS 'Counts a running run''s progress while none of its targets failed; false when the caller must refresh it (refsync internal).';
--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION refdata.advance_run(bigint) FROM PUBLIC;
