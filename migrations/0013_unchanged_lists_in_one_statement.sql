-- The unchanged lists of one run job in one statement.
--
-- A worker's run job syncs its source's small lists itself (src/queue/handlers/inline-targets.ts). Each list
-- whose fetched content hash is the one its last ok snapshot had when the job began is set aside,
-- and all of them are recorded by one call of refdata.record_unchanged_lists after the job's last
-- list: per list what refdata.record_unchanged (migration 0012) does, with no round trip, statement,
-- transaction or commit of its own. P4's hourly slot made 23 such statements per source.
--
-- Each list's lock is only tried (pg_try_advisory_xact_lock), never waited for: the call holds the
-- locks of the lists it recorded until it commits, so waiting for one while holding others could
-- hold up (or, with another caller locking in another order, deadlock with) a sync of those. A list
-- whose lock is taken, whose last ok snapshot has another hash by now, or whose views wait gets a
-- null snapshot id and nothing written: the caller syncs it again the ordinary way (a target job).
--
-- Its commit does not wait for the WAL flush: the caller counts the run's progress next, in a
-- statement whose commit does (refdata.run_progress), as it does after the lists' one-by-one records.
CREATE FUNCTION refdata.record_unchanged_lists(p_environment text, p_run_id bigint, p_lists jsonb)
RETURNS TABLE (list_key text, variant text, snapshot_id bigint)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_list record;
  v_state record;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  FOR v_list IN
    SELECT l.list_key, l.variant, l.content_hash, l.entry_count, l.fields, l.pages, l.duration_ms, l.replaced_values
    FROM jsonb_to_recordset(p_lists) AS l(list_key text, variant text, content_hash text, entry_count integer, fields text[],
                                          pages integer, duration_ms integer, replaced_values integer)
  LOOP
    list_key := v_list.list_key;
    variant := v_list.variant;
    snapshot_id := NULL;
    IF pg_try_advisory_xact_lock(refdata.target_lock_key(p_environment, v_list.list_key, v_list.variant)) THEN
      -- A statement of its own after the lock: it sees the commit of the sync that held it last.
      SELECT * INTO v_state FROM refdata.target_state(p_environment, v_list.list_key, v_list.variant);
      IF NOT v_state.views_waiting AND v_state.last_ok ->> 'content_hash' = v_list.content_hash THEN
        INSERT INTO refdata.snapshots
          (run_id, environment, list_key, variant, fetched_at, status, content_hash, entry_count, changed,
           added, removed, modified, reappeared, error, error_code, fields, pages, duration_ms, replaced_values,
           nonconforming, reshaped, schema_accepted)
        VALUES
          (p_run_id, p_environment, v_list.list_key, v_list.variant, v_state.now, 'ok', v_list.content_hash, v_list.entry_count, false,
           0, 0, 0, 0, NULL, NULL, v_list.fields, v_list.pages, v_list.duration_ms, v_list.replaced_values,
           coalesce((v_state.last_ok ->> 'nonconforming')::integer, 0), 0, false)
        RETURNING id INTO snapshot_id;
      END IF;
    END IF;
    RETURN NEXT;
  END LOOP;
END;
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.record_unchanged_lists(text, bigint, jsonb) IS 'Records the unchanged fetches of one run job''s lists in one statement, each only if its lock is free (refsync internal).';
--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION refdata.record_unchanged_lists(text, bigint, jsonb) FROM PUBLIC;
