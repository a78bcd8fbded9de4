CREATE TABLE "refdata"."change_feed_epochs" (
	"epoch" integer PRIMARY KEY NOT NULL,
	"system_identifier" text,
	"timeline" integer,
	"previous_end" text,
	"reason" text NOT NULL,
	"began_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
DROP INDEX "refdata"."entry_changes_feed_idx";--> statement-breakpoint
ALTER TABLE "refdata"."change_feed_consumers" ADD COLUMN "lease_token" text;--> statement-breakpoint
ALTER TABLE "refdata"."change_feed_consumers" ADD COLUMN "lease_holder" text;--> statement-breakpoint
ALTER TABLE "refdata"."change_feed_consumers" ADD COLUMN "lease_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "refdata"."entry_changes" ADD COLUMN "feed_epoch" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "entry_changes_feed_order_idx" ON "refdata"."entry_changes" USING btree ("feed_epoch","txid","id");--> statement-breakpoint
-- The change feed at its edges (docs/change-feed.md; docs/architecture.md, "The change feed").
--
-- Epochs. A position holds the writing transaction's id, and transaction ids belong to one server's
-- history: restored into another cluster (pg_dump | pg_restore), the restored rows carry ids the new
-- server has not reached, and its own new rows would sort before them; after a point-in-time restore
-- the server hands out again the ids of the timeline it discarded. So the feed orders rows by
-- (feed_epoch, txid, id). feed_epoch has a constant column default, which writers never name: a row
-- costs nothing more to write. When refsync finds the database restored (another system identifier,
-- another timeline, or rows whose txid this server has not reached) it adds an epoch and raises the
-- default by DDL, which waits for every open writer of entry_changes: every row of a past epoch is
-- committed, so only the current epoch is held back by the oldest open transaction.
--
-- Positions of epoch 0 keep their form (txid and id, 20 digits each), so every position stored before
-- this migration stays valid; later epochs' positions are 'E', the epoch in 10 digits, '-', then the
-- same: a letter sorts after every digit, so positions still sort as text in feed order.
DROP FUNCTION refdata.change_feed(text, integer);--> statement-breakpoint
COMMENT ON COLUMN refdata.entry_changes.feed_epoch IS 'The change feed epoch the change was written in (refdata.change_feed_epochs): 0 until the database is first restored. With txid and id, the order of refdata.change_feed.';--> statement-breakpoint
COMMENT ON TABLE refdata.change_feed_epochs IS 'The histories the change feed has served from: epoch 0 is the database as migrated; refsync adds one when it finds the database restored into another cluster, onto another timeline, or behind its own transaction ids.';--> statement-breakpoint
COMMENT ON COLUMN refdata.change_feed_epochs.epoch IS 'The epoch: 0 for the database as migrated, one more for each restore refsync recorded. Positions of epoch 1 on start with E and the epoch.';--> statement-breakpoint
COMMENT ON COLUMN refdata.change_feed_epochs.system_identifier IS 'pg_control_system().system_identifier of the cluster the epoch began on (NULL where it could not be read).';--> statement-breakpoint
COMMENT ON COLUMN refdata.change_feed_epochs.timeline IS 'The WAL timeline the epoch began on (NULL where it could not be read).';--> statement-breakpoint
COMMENT ON COLUMN refdata.change_feed_epochs.previous_end IS 'The last position of the epoch before, as this database holds it: a position of that epoch past it is from a history the restore discarded, and is refused.';--> statement-breakpoint
COMMENT ON COLUMN refdata.change_feed_epochs.reason IS 'Why the epoch began: installed, or the restore refsync found.';--> statement-breakpoint
COMMENT ON COLUMN refdata.change_feed_epochs.began_at IS 'When refsync recorded the epoch.';--> statement-breakpoint
COMMENT ON TABLE refdata.change_feed_consumers IS 'Where each named reader of the change feed has got to (refsync changes --consumer NAME): the position its reader last committed, and the lease of the one process reading under the name.';--> statement-breakpoint
COMMENT ON COLUMN refdata.change_feed_consumers.position IS 'The feed position of the last change the consumer''s reader committed as processed: pass it to refdata.change_feed as p_after. Never moves backwards.';--> statement-breakpoint
COMMENT ON COLUMN refdata.change_feed_consumers.lease_token IS 'The random token of the process reading under this name (NULL: none); another waits or is refused until lease_until passes.';--> statement-breakpoint
COMMENT ON COLUMN refdata.change_feed_consumers.lease_holder IS 'Who holds the lease: host and process id, for the line a second process is refused with.';--> statement-breakpoint
COMMENT ON COLUMN refdata.change_feed_consumers.lease_until IS 'When the lease lapses unless renewed: its holder renews it while it runs, so a killed holder frees the name within the lease.';--> statement-breakpoint
-- The WAL timeline the server is on: from the current WAL file's name on a primary (at once after a
-- promotion, where the control file's checkpoint lags until the next checkpoint), from the control
-- file on a standby (which may not call pg_current_wal_lsn).
CREATE FUNCTION refdata.change_feed_timeline() RETURNS integer
LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
  SELECT CASE WHEN pg_is_in_recovery() THEN (SELECT timeline_id FROM pg_control_checkpoint())
              ELSE ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::integer END
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.change_feed_timeline() IS 'The WAL timeline this server is on (a point-in-time restore or a promotion starts a new one).';--> statement-breakpoint
-- Not STRICT: Postgres inlines a STRICT SQL function only when its body is strict too, which a CASE
-- is not, and a call per row costs the feed a third of its read rate (a NULL argument still gives NULL).
CREATE FUNCTION refdata.change_feed_position(p_epoch integer, p_txid xid8, p_id bigint) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN p_epoch = 0 THEN '' ELSE 'E' || lpad(p_epoch::text, 10, '0') || '-' END
         || lpad(p_txid::text, 20, '0') || '-' || lpad(p_id::text, 20, '0')
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.change_feed_position(integer, xid8, bigint) IS 'The change feed position of a change: its txid and id, each zero-padded to 20 digits, after ''E'' and its epoch in 10 digits from epoch 1 on, so that positions sort as text in feed order.';--> statement-breakpoint
-- The position a caller passed back, checked for its form and ranges: NULL reads from the start of
-- history; anything the feed could not have returned is refused in one line (22023), before a job could
-- take a wrong cursor for an empty feed. Immutable, so a call with a given argument is folded to a
-- constant where it is read. Where the feed ends is change_feed_check's to say.
CREATE OR REPLACE FUNCTION refdata.change_feed_after(p_after text) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  parts text[];
BEGIN
  IF p_after IS NULL THEN
    RETURN refdata.change_feed_position(0, '0', 0);
  END IF;
  parts := regexp_match(p_after, '^(?:E([0-9]{10})-)?([0-9]{20})-([0-9]{20})$');
  IF parts IS NULL THEN
    RAISE EXCEPTION 'change feed position % is not one the feed returned (20 digits, "-", 20 digits; from epoch 1 on, E and 10 digits before them)', quote_literal(p_after)
      USING ERRCODE = '22023';
  ELSIF parts[1] IS NOT NULL AND (parts[1]::numeric = 0 OR parts[1]::numeric > 2147483647) THEN
    RAISE EXCEPTION 'change feed position % is not one the feed returned: its epoch % is out of range (1 to 2147483647; epoch 0 has no E part)', quote_literal(p_after), parts[1]::numeric
      USING ERRCODE = '22023';
  ELSIF parts[2]::numeric > 18446744073709551615 THEN
    RAISE EXCEPTION 'change feed position % is not one the feed returned: its transaction id % is past the range of a transaction id (2^64 - 1)', quote_literal(p_after), parts[2]::numeric
      USING ERRCODE = '22023';
  ELSIF parts[3]::numeric > 9223372036854775807 THEN
    RAISE EXCEPTION 'change feed position % is not one the feed returned: its id % is past the range of an id (bigint, 2^63 - 1)', quote_literal(p_after), parts[3]::numeric
      USING ERRCODE = '22023';
  END IF;
  RETURN p_after;
END;
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.change_feed_after(text) IS 'The position given to refdata.change_feed, checked for its form and ranges: NULL is the start of history; anything but a position the feed could return is refused (22023).';--> statement-breakpoint
-- A checked position's parts. Through numeric: xid8's input reads a leading zero as octal, bigint's does not.
CREATE FUNCTION refdata.change_feed_epoch_of(p_after text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN left(refdata.change_feed_after(p_after), 1) = 'E' THEN substr(p_after, 2, 10)::integer ELSE 0 END
$$;
--> statement-breakpoint
CREATE FUNCTION refdata.change_feed_txid_of(p_after text) RETURNS xid8
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT split_part(right(refdata.change_feed_after(p_after), 41), '-', 1)::numeric::text::xid8
$$;
--> statement-breakpoint
CREATE FUNCTION refdata.change_feed_id_of(p_after text) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT split_part(right(refdata.change_feed_after(p_after), 41), '-', 2)::bigint
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.change_feed_epoch_of(text) IS 'The feed epoch of a checked change feed position (0 for the 20-20 form).';--> statement-breakpoint
COMMENT ON FUNCTION refdata.change_feed_txid_of(text) IS 'The transaction id of a checked change feed position.';--> statement-breakpoint
COMMENT ON FUNCTION refdata.change_feed_id_of(text) IS 'The change id of a checked change feed position.';--> statement-breakpoint
CREATE FUNCTION refdata.change_feed_current_epoch() RETURNS integer
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT coalesce(max(epoch), 0) FROM refdata.change_feed_epochs
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.change_feed_current_epoch() IS 'The epoch rows are written in now (refdata.change_feed_epochs).';--> statement-breakpoint
-- Whether the feed may be read after p_after now, in the calling statement's snapshot: raises when it
-- may not. 55000 when the database was restored and refsync has not yet recorded it (the feed would
-- serve nothing, or skip: `refsync migrate`, or any sync, records it); 22023 for a position the feed
-- could not have returned: past the current epoch's end (the fence is the oldest open transaction,
-- which never goes back), past the end a restore left a past epoch with (a history the restore
-- discarded), or of an epoch that has not begun. A caught-up reader's position is the end itself: it
-- reads nothing, and is never refused.
CREATE FUNCTION refdata.change_feed_check(p_after text) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
DECLARE
  pos text := refdata.change_feed_after(p_after);
  pos_epoch integer := refdata.change_feed_epoch_of(pos);
  pos_txid xid8 := refdata.change_feed_txid_of(pos);
  pos_id bigint := refdata.change_feed_id_of(pos);
  cur refdata.change_feed_epochs;
  later refdata.change_feed_epochs;
  fence xid8 := pg_snapshot_xmin(pg_current_snapshot());
  end_txid xid8;
  end_id bigint;
  sysid text;
  timeline integer;
BEGIN
  SELECT * INTO cur FROM refdata.change_feed_epochs ORDER BY epoch DESC LIMIT 1;
  -- Read only where they were recorded: a platform that hides them recorded NULL.
  IF cur.system_identifier IS NOT NULL THEN
    SELECT system_identifier::text INTO sysid FROM pg_control_system();
  END IF;
  IF cur.timeline IS NOT NULL THEN
    timeline := refdata.change_feed_timeline();
  END IF;
  IF (cur.system_identifier IS NOT NULL AND cur.system_identifier IS DISTINCT FROM sysid)
     OR (cur.timeline IS NOT NULL AND cur.timeline IS DISTINCT FROM timeline)
     OR EXISTS (SELECT 1 FROM refdata.entry_changes c
                WHERE c.feed_epoch = coalesce(cur.epoch, 0) AND c.txid >= pg_snapshot_xmax(pg_current_snapshot())) THEN
    RAISE EXCEPTION 'the change feed''s database was restored (%), and refsync has not recorded it yet: run `refsync migrate` (any sync records it too); until then the feed serves nothing rather than skip changes',
      CASE WHEN cur.system_identifier IS DISTINCT FROM sysid THEN format('into another cluster: system identifier %s, was %s', sysid, cur.system_identifier)
           WHEN cur.timeline IS DISTINCT FROM timeline THEN format('onto timeline %s, was %s: a point-in-time restore or a promotion', timeline, cur.timeline)
           ELSE 'it holds changes of transaction ids this server has not reached' END
      USING ERRCODE = '55000';
  END IF;
  IF p_after IS NULL THEN
    RETURN true;
  END IF;
  IF pos_epoch > coalesce(cur.epoch, 0) THEN
    RAISE EXCEPTION 'change feed position % is ahead of the feed: its epoch % has not begun in this database (the current one is %)', quote_literal(p_after), pos_epoch, coalesce(cur.epoch, 0)
      USING ERRCODE = '22023';
  ELSIF pos_epoch < cur.epoch THEN
    SELECT * INTO later FROM refdata.change_feed_epochs WHERE epoch > pos_epoch ORDER BY epoch LIMIT 1;
    IF later.previous_end IS NULL
       OR (pos_txid, pos_id) > (refdata.change_feed_txid_of(later.previous_end), refdata.change_feed_id_of(later.previous_end)) THEN
      RAISE EXCEPTION 'change feed position % is from a history this database no longer has: it was restored %, recorded % as feed epoch %, and its history before then ends at %; the changes read past that are not in this database. Resume after % (or from the start of epoch %, %)',
        quote_literal(p_after), later.reason, to_char(later.began_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS"Z"'), later.epoch,
        coalesce(later.previous_end, 'the start (it held no change)'), coalesce(later.previous_end, 'the start'), later.epoch,
        refdata.change_feed_position(later.epoch, '0', 0)
        USING ERRCODE = '22023';
    END IF;
  ELSE
    SELECT c.txid, c.id INTO end_txid, end_id FROM refdata.entry_changes c
    WHERE c.feed_epoch = pos_epoch AND c.txid < fence ORDER BY c.feed_epoch DESC, c.txid DESC, c.id DESC LIMIT 1;
    IF pos_txid >= fence OR (end_txid IS NULL AND (pos_txid, pos_id) > ('0'::xid8, 0::bigint)) OR (pos_txid, pos_id) > (end_txid, end_id) THEN
      RAISE EXCEPTION 'change feed position % is past the feed''s end (%): not one this database''s feed returned', quote_literal(p_after),
        coalesce(refdata.change_feed_position(pos_epoch, end_txid, end_id), 'no change yet')
        USING ERRCODE = '22023';
    END IF;
  END IF;
  RETURN true;
END;
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.change_feed_check(text) IS 'Whether refdata.change_feed may be read after the position now: raises 22023 for a position the feed could not have returned (past its end, of a history a restore discarded) and 55000 for a restore refsync has not recorded yet.';--> statement-breakpoint
-- One statement, read-only, no session state: it runs as it is behind a transaction-mode pooler. A
-- SQL function of one SELECT is inlined into the caller's query: change_feed_check has no column
-- in it, so it is a one-time filter run before the scan (an empty feed checks the position too), and
-- the rest is a range on entry_changes_feed_order_idx, read in order up to the limit. Past epochs are
-- all committed: only the current one is held below the oldest open transaction.
CREATE FUNCTION refdata.change_feed(p_after text DEFAULT NULL, p_limit integer DEFAULT 10000)
RETURNS TABLE (
  "position" text, id bigint, snapshot_id bigint, environment text, list_key text, variant text, entry_key text,
  code text, change text, before jsonb, after jsonb, changed_fields text[], detected_at timestamptz, impact jsonb, txid xid8,
  feed_epoch integer
)
LANGUAGE sql STABLE AS $$
  SELECT refdata.change_feed_position(c.feed_epoch, c.txid, c.id), c.id, c.snapshot_id, c.environment, c.list_key, c.variant, c.entry_key,
         c.code, c.change, c.before, c.after, c.changed_fields, c.detected_at, c.impact, c.txid, c.feed_epoch
  FROM refdata.entry_changes c
  WHERE refdata.change_feed_check(p_after)
    AND (c.feed_epoch, c.txid, c.id) > (refdata.change_feed_epoch_of(p_after), refdata.change_feed_txid_of(p_after), refdata.change_feed_id_of(p_after))
    AND (c.feed_epoch, c.txid) < (refdata.change_feed_current_epoch(), pg_snapshot_xmin(pg_current_snapshot()))
  ORDER BY c.feed_epoch, c.txid, c.id
  LIMIT p_limit
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.change_feed(text, integer) IS 'Every recorded change exactly once, in commit-safe order: pass back the position of the last row processed (NULL: from the start). A change is served only once no open transaction could still write one before it. A position it could not have returned is refused (22023).';--> statement-breakpoint
-- The position of the last change the feed serves now (NULL: none yet): where a reader that starts at
-- the end (`refsync changes --follow`) begins. Every change served later comes after it.
CREATE FUNCTION refdata.change_feed_end() RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT refdata.change_feed_position(c.feed_epoch, c.txid, c.id)
  FROM refdata.entry_changes c
  WHERE refdata.change_feed_check(NULL)
    AND (c.feed_epoch, c.txid) < (refdata.change_feed_current_epoch(), pg_snapshot_xmin(pg_current_snapshot()))
  ORDER BY c.feed_epoch DESC, c.txid DESC, c.id DESC
  LIMIT 1
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.change_feed_end() IS 'The position of the last change refdata.change_feed serves now (NULL: none yet).';--> statement-breakpoint
-- Records a restore before anything is written after it: refsync calls it from `refsync migrate`,
-- before a sync writes and before each of a worker's run jobs. Cheap when nothing changed (the
-- control file, one index probe); otherwise it adds an epoch and raises entry_changes.feed_epoch's
-- default, under the table's lock: the ALTER waits for every open writer, and every later one writes
-- the new epoch. The epoch's previous_end is the last row of the epoch before as this database holds
-- it. Runs as the owner of refdata (SECURITY DEFINER): only the owner may alter the table. Not for
-- readers: like refdata.advance_run, it is refsync's own (the role that migrates and writes).
CREATE FUNCTION refdata.change_feed_follow_restore() RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  cur refdata.change_feed_epochs;
  sysid text;
  timeline integer;
  behind boolean;
  reason text;
  last_position text;
BEGIN
  FOR attempt IN 1..2 LOOP
    SELECT * INTO cur FROM refdata.change_feed_epochs ORDER BY epoch DESC LIMIT 1;
    BEGIN
      SELECT system_identifier::text INTO sysid FROM pg_control_system();
      timeline := refdata.change_feed_timeline();
    EXCEPTION WHEN OTHERS THEN
      sysid := NULL;
      timeline := NULL;
    END;
    behind := EXISTS (SELECT 1 FROM refdata.entry_changes c
                      WHERE c.feed_epoch = coalesce(cur.epoch, 0) AND c.txid >= pg_snapshot_xmax(pg_current_snapshot()));
    IF cur.epoch IS NOT NULL AND NOT behind
       AND (sysid IS NULL OR cur.system_identifier IS NULL OR cur.system_identifier = sysid)
       AND (timeline IS NULL OR cur.timeline IS NULL OR cur.timeline = timeline) THEN
      RETURN cur.epoch;
    END IF;
    EXIT WHEN attempt = 2;
    -- One process records it; another waits here, then finds it recorded.
    LOCK TABLE refdata.change_feed_epochs IN EXCLUSIVE MODE;
  END LOOP;
  IF cur.epoch IS NULL THEN
    INSERT INTO refdata.change_feed_epochs (epoch, system_identifier, timeline, previous_end, reason) VALUES (0, sysid, timeline, NULL, 'installed');
    RETURN 0;
  END IF;
  reason := CASE
    WHEN sysid IS NOT NULL AND cur.system_identifier IS NOT NULL AND cur.system_identifier <> sysid
      THEN format('into another cluster (system identifier %s, was %s)', sysid, cur.system_identifier)
    WHEN timeline IS NOT NULL AND cur.timeline IS NOT NULL AND cur.timeline <> timeline
      THEN format('onto timeline %s (was %s): a point-in-time restore or a promotion', timeline, cur.timeline)
    ELSE 'behind this server''s transaction ids' END;
  EXECUTE format('ALTER TABLE refdata.entry_changes ALTER COLUMN feed_epoch SET DEFAULT %s', cur.epoch + 1);
  SELECT refdata.change_feed_position(c.feed_epoch, c.txid, c.id) INTO last_position FROM refdata.entry_changes c
  WHERE c.feed_epoch = cur.epoch ORDER BY c.feed_epoch DESC, c.txid DESC, c.id DESC LIMIT 1;
  INSERT INTO refdata.change_feed_epochs (epoch, system_identifier, timeline, previous_end, reason)
  VALUES (cur.epoch + 1, sysid, timeline, last_position, reason);
  RAISE LOG 'refsync: change feed epoch % begins: the database was restored %', cur.epoch + 1, reason;
  RETURN cur.epoch + 1;
END;
$$;
--> statement-breakpoint
-- Epoch 0: the database as it is now, its cluster's identity and timeline recorded (NULL where the
-- platform will not tell them: then only the transaction ids are compared).
SELECT refdata.change_feed_follow_restore();--> statement-breakpoint
COMMENT ON FUNCTION refdata.change_feed_follow_restore() IS 'Records a restore of the database (another cluster, another timeline, transaction ids behind its rows) as a new change feed epoch, before anything is written after it; returns the current epoch. Called by refsync before it writes.';--> statement-breakpoint
-- How long the feed is held back, and by whom. An open write transaction is one with a transaction
-- id, in pg_stat_activity (every database of the server) or pg_prepared_xacts; the one holding the
-- feed is the oldest id (greatest age()). Not from the snapshot: an open transaction whose id is the
-- newest leaves xmin equal to xmax. The function runs as the owner of refdata (SECURITY DEFINER), so
-- that it sees every session the owner may; it tells the caller (its session's login) only what
-- pg_stat_activity would: the holder's pid, application, state and start when the caller has the
-- privileges of the holder's role, of the owner of refdata, or pg_read_all_stats; otherwise only that
-- the feed is held, held_seconds NULL (held, for how long not shown), never 0. The caller's own
-- transaction counts like any other.
CREATE OR REPLACE FUNCTION refdata.change_feed_held(
  OUT held_seconds double precision, OUT pid integer, OUT application_name text, OUT state text, OUT xact_start timestamptz
)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  WITH holders AS (
    SELECT a.pid, a.backend_xid AS xid, a.application_name, a.state, a.xact_start, a.usesysid AS role
    FROM pg_stat_activity a
    WHERE a.backend_xid IS NOT NULL
    UNION ALL
    SELECT NULL, p.transaction, 'prepared transaction ' || p.gid, 'prepared', p.prepared, r.oid
    FROM pg_prepared_xacts p LEFT JOIN pg_roles r ON r.rolname = p.owner
  ), oldest AS (
    SELECT h.*, (pg_has_role(session_user, 'pg_read_all_stats', 'USAGE')
                 OR pg_has_role(session_user, (SELECT n.nspowner FROM pg_namespace n WHERE n.nspname = 'refdata'), 'USAGE')
                 OR (h.role IS NOT NULL AND pg_has_role(session_user, h.role, 'USAGE'))) AS shown
    FROM holders h ORDER BY age(h.xid) DESC LIMIT 1
  )
  -- No greatest(0, ...) around the age: it would read a hidden start as 0.
  SELECT CASE WHEN o.xid IS NULL THEN 0 WHEN o.shown THEN extract(epoch FROM clock_timestamp() - o.xact_start)::double precision END,
         CASE WHEN o.shown THEN o.pid END, CASE WHEN o.shown THEN o.application_name END,
         CASE WHEN o.shown THEN o.state END, CASE WHEN o.shown THEN o.xact_start END
  FROM (SELECT) AS one LEFT JOIN oldest o ON true
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.change_feed_held() IS 'How long refdata.change_feed has been held back by the oldest open write transaction in the cluster (0 when none; NULL when held but the caller, or the owner of refdata, may not see since when), and which session holds it, shown only to a caller pg_stat_activity would show it to. Runs as the owner of refdata.';--> statement-breakpoint
GRANT SELECT ON refdata.change_feed_epochs TO refdata_reader;--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION refdata.change_feed_timeline(), refdata.change_feed_position(integer, xid8, bigint), refdata.change_feed_epoch_of(text),
  refdata.change_feed_txid_of(text), refdata.change_feed_id_of(text), refdata.change_feed_current_epoch(), refdata.change_feed_check(text),
  refdata.change_feed(text, integer), refdata.change_feed_end(), refdata.change_feed_follow_restore() FROM PUBLIC;--> statement-breakpoint
GRANT EXECUTE ON FUNCTION refdata.change_feed_timeline(), refdata.change_feed_position(integer, xid8, bigint), refdata.change_feed_epoch_of(text),
  refdata.change_feed_txid_of(text), refdata.change_feed_id_of(text), refdata.change_feed_current_epoch(), refdata.change_feed_check(text),
  refdata.change_feed(text, integer), refdata.change_feed_end() TO refdata_reader;
