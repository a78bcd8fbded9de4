-- The digest of a small list's entries as served (src/sync/collect/collect.ts).
--
-- A sync that read its lists' last ok snapshots first (a run job, `refsync sync`) holds a small
-- list's answers unnormalised until they have ended, and compares their digest with the last ok
-- snapshot's: the same digest means the same entries, so the same content hash, and the fetch is
-- set aside as unchanged without normalising or hashing an entry. The column is null for a large
-- list, a failed fetch, and a snapshot an earlier refsync or refdata.record_unchanged wrote: the
-- next sync of such a list normalises it as ever and records its digest.
--
-- refdata.record_unchanged_lists takes the digest with each list: a worker of the previous release
-- still running during the roll sends none, and its snapshots have none.
ALTER TABLE "refdata"."snapshots" ADD COLUMN "served_digest" text;--> statement-breakpoint
COMMENT ON COLUMN refdata.snapshots.served_digest IS 'sha-256 (hex) of the entries as served, seeded with the refsync release and the list''s key rules: an unchanged sync that finds it again skips normalising the list. Null for large lists and failed fetches.';--> statement-breakpoint
CREATE OR REPLACE FUNCTION refdata.record_unchanged_lists(p_environment text, p_run_id bigint, p_lists jsonb)
RETURNS TABLE (list_key text, variant text, snapshot_id bigint)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_list record;
  v_state record;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  FOR v_list IN
    SELECT l.list_key, l.variant, l.content_hash, l.entry_count, l.fields, l.pages, l.duration_ms, l.replaced_values, l.served_digest
    FROM jsonb_to_recordset(p_lists) AS l(list_key text, variant text, content_hash text, entry_count integer, fields text[],
                                          pages integer, duration_ms integer, replaced_values integer, served_digest text)
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
           nonconforming, reshaped, schema_accepted, served_digest)
        VALUES
          (p_run_id, p_environment, v_list.list_key, v_list.variant, v_state.now, 'ok', v_list.content_hash, v_list.entry_count, false,
           0, 0, 0, 0, NULL, NULL, v_list.fields, v_list.pages, v_list.duration_ms, v_list.replaced_values,
           coalesce((v_state.last_ok ->> 'nonconforming')::integer, 0), 0, false, v_list.served_digest)
        RETURNING id INTO snapshot_id;
      END IF;
    END IF;
    RETURN NEXT;
  END LOOP;
END;
$$;
