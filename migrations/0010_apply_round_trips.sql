-- The reads every apply and every run's progress make, as functions: one round trip where there were
-- two, and plans kept by the session (PL/pgSQL caches them) where each call planned its statement
-- anew. Measured in the bench's unchanged slot (issue 36): planning was 0.33 ms of the target state's
-- 0.47 ms, on every target of every run.
--
-- The advisory-lock key of one target (environment, list, variant): the same hash refsync has always
-- taken (hashtextextended of the three joined by U+001F, seed 7302611), so workers of either version
-- exclude each other during a rolling upgrade.
CREATE FUNCTION refdata.target_lock_key(p_environment text, p_list_key text, p_variant text) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT hashtextextended(p_environment || chr(31) || p_list_key || chr(31) || p_variant, 7302611)
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.target_lock_key(text, text, text) IS 'The advisory-lock key that serialises the writers of one target (refsync internal).';
--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION refdata.target_lock_key(text, text, text) FROM PUBLIC;
--> statement-breakpoint
-- The clock, whether the list's views wait to be re-created, and the target's last ok snapshot and
-- last snapshot of any status (as JSON of id, status, content_hash, fields, entry_count,
-- nonconforming). It names refdata.snapshots only: an unchanged sync must not lock the entries.
CREATE FUNCTION refdata.target_state(p_environment text, p_list_key text, p_variant text)
RETURNS TABLE (now timestamptz, views_waiting boolean, last_ok jsonb, last jsonb)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY SELECT clock_timestamp(),
    EXISTS (SELECT 1 FROM refdata.list_views_waiting w WHERE w.list_key = p_list_key),
    (SELECT to_jsonb(s) FROM (SELECT id, status, content_hash, fields, entry_count, nonconforming FROM refdata.snapshots
       WHERE environment = p_environment AND list_key = p_list_key AND variant = p_variant AND status = 'ok'
       ORDER BY id DESC LIMIT 1) s),
    (SELECT to_jsonb(s) FROM (SELECT id, status, content_hash, fields, entry_count, nonconforming FROM refdata.snapshots
       WHERE environment = p_environment AND list_key = p_list_key AND variant = p_variant
       ORDER BY id DESC LIMIT 1) s);
END;
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.target_state(text, text, text) IS 'The clock and a target''s last snapshots, as an apply reads them (refsync internal).';
--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION refdata.target_state(text, text, text) FROM PUBLIC;
--> statement-breakpoint
-- Takes the target's lock for the rest of the transaction (waiting for it), then reads its state.
-- VOLATILE on purpose: each statement of a volatile function takes a new snapshot, so the read sees
-- the commit the lock waited for, which a read in the lock's own statement could miss.
CREATE FUNCTION refdata.lock_target_state(p_environment text, p_list_key text, p_variant text)
RETURNS TABLE (now timestamptz, views_waiting boolean, last_ok jsonb, last jsonb)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(refdata.target_lock_key(p_environment, p_list_key, p_variant));
  RETURN QUERY SELECT * FROM refdata.target_state(p_environment, p_list_key, p_variant);
END;
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.lock_target_state(text, text, text) IS 'Locks a target for the transaction, then reads its state (refsync internal).';
--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION refdata.lock_target_state(text, text, text) FROM PUBLIC;
--> statement-breakpoint
-- A run's progress from its snapshots, under the run row's lock (taken first, for the rest of the
-- transaction, so the last of concurrent callers sees every snapshot committed before it): the
-- targets with a snapshot, those whose every snapshot failed, and what went wrong with them. A run
-- no longer running returns its status with no progress counted.
CREATE FUNCTION refdata.run_progress(p_run_id bigint)
RETURNS TABLE (status text, targets_total integer, done integer, failed integer, problems text)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
  v_status text;
  v_total integer;
BEGIN
  SELECT r.status, r.targets_total INTO v_status, v_total FROM refdata.sync_runs r WHERE r.id = p_run_id FOR UPDATE;
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
--> statement-breakpoint
COMMENT ON FUNCTION refdata.run_progress(bigint) IS 'Locks a sync run and counts its progress from its snapshots (refsync internal).';
--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION refdata.run_progress(bigint) FROM PUBLIC;
