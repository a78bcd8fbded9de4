-- The change feed for downstream jobs (docs/architecture.md, "The change feed").
--
-- entry_changes.id is taken when a row is written and detected_at when its sync's transaction began,
-- so neither orders rows by commit: a job that kept the last id it read skipped the changes of a long
-- sync that committed after a short one. The feed orders rows by (txid, id), txid being the writing
-- transaction's 64-bit id, and serves only rows whose txid is below the oldest transaction still
-- open (pg_snapshot_xmin of the reading statement's snapshot). Every transaction below that fence has
-- ended and is visible to the statement, and every transaction that can still write has a txid at or
-- above it: no row can ever appear before a position the feed has served.
--
-- The column is added with a constant default first, which Postgres records without rewriting the
-- table (the rows written before this migration read txid 0: the feed serves them first, in id
-- order, all being committed once this migration holds the table's lock), then given the writing
-- transaction's id as the default for every row written from now on, by this release's code and by
-- a previous release's worker still running during a roll alike (neither names the column).
CREATE TABLE "refdata"."change_feed_consumers" (
	"name" text PRIMARY KEY NOT NULL,
	"position" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "refdata"."entry_changes" ADD COLUMN "txid" "xid8" DEFAULT '0' NOT NULL;--> statement-breakpoint
ALTER TABLE "refdata"."entry_changes" ALTER COLUMN "txid" SET DEFAULT pg_current_xact_id();--> statement-breakpoint
CREATE INDEX "entry_changes_feed_idx" ON "refdata"."entry_changes" USING btree ("txid","id");--> statement-breakpoint
COMMENT ON COLUMN refdata.entry_changes.txid IS 'The transaction that wrote the change (0 for changes recorded before refsync 0.3): with id, the order of refdata.change_feed. Not a cursor on its own: read the feed.';--> statement-breakpoint
COMMENT ON COLUMN refdata.entry_changes.detected_at IS 'When the sync that recorded the change began its transaction (database clock). Not a cursor: a longer sync commits changes dated before ones already readable; read refdata.change_feed.';--> statement-breakpoint
COMMENT ON COLUMN refdata.entry_changes.id IS 'Change id, taken when the row is written. Not a cursor: ids commit out of order; read refdata.change_feed.';--> statement-breakpoint
COMMENT ON TABLE refdata.change_feed_consumers IS 'Where each named reader of the change feed has got to (refsync changes --consumer NAME): the position of the last change it wrote out.';--> statement-breakpoint
COMMENT ON COLUMN refdata.change_feed_consumers.name IS 'The consumer''s name, as given to --consumer.';--> statement-breakpoint
COMMENT ON COLUMN refdata.change_feed_consumers.position IS 'The feed position of the last change the consumer processed: pass it to refdata.change_feed as p_after.';--> statement-breakpoint
COMMENT ON COLUMN refdata.change_feed_consumers.updated_at IS 'When the position was last stored.';--> statement-breakpoint
-- A position is the row's txid and id, each zero-padded to 20 digits (an xid8 and a bigint fit), so
-- that positions sort as text in feed order and max(position) of the rows processed is the cursor.
CREATE FUNCTION refdata.change_feed_position(p_txid xid8, p_id bigint) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT lpad(p_txid::text, 20, '0') || '-' || lpad(p_id::text, 20, '0')
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.change_feed_position(xid8, bigint) IS 'The change feed position of a change: its txid and id, each zero-padded to 20 digits, so that positions sort as text in feed order.';--> statement-breakpoint
-- The position a caller passed back, checked: NULL reads from the start of history; anything but a
-- position the feed returned is refused in one line, before a job could take a wrong cursor for an
-- empty feed. Immutable, so a call with a given argument is folded to a constant where it is read.
CREATE FUNCTION refdata.change_feed_after(p_after text) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  IF p_after IS NULL THEN
    RETURN refdata.change_feed_position('0', 0);
  ELSIF p_after ~ '^[0-9]{20}-[0-9]{20}$' THEN
    RETURN p_after;
  END IF;
  RAISE EXCEPTION 'change feed position % is not one the feed returned (20 digits, "-", 20 digits)', quote_literal(p_after)
    USING ERRCODE = '22023';
END;
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.change_feed_after(text) IS 'The position given to refdata.change_feed, checked: NULL is the start of history; anything but a position the feed returned is refused.';--> statement-breakpoint
-- One statement, read-only, no session state: it runs as it is behind a transaction-mode pooler. A
-- SQL function of one SELECT is inlined into the caller's query, so (txid, id) > the position's is a
-- range on entry_changes_feed_idx, read in order up to the limit.
CREATE FUNCTION refdata.change_feed(p_after text DEFAULT NULL, p_limit integer DEFAULT 10000)
RETURNS TABLE (
  "position" text, id bigint, snapshot_id bigint, environment text, list_key text, variant text, entry_key text,
  code text, change text, before jsonb, after jsonb, changed_fields text[], detected_at timestamptz, impact jsonb, txid xid8
)
LANGUAGE sql STABLE AS $$
  SELECT refdata.change_feed_position(c.txid, c.id), c.id, c.snapshot_id, c.environment, c.list_key, c.variant, c.entry_key,
         c.code, c.change, c.before, c.after, c.changed_fields, c.detected_at, c.impact, c.txid
  FROM refdata.entry_changes c
  -- Through numeric: xid8's input reads a leading zero as octal, bigint's does not.
  WHERE (c.txid, c.id) > (split_part(refdata.change_feed_after(p_after), '-', 1)::numeric::text::xid8,
                          split_part(refdata.change_feed_after(p_after), '-', 2)::bigint)
    AND c.txid < pg_snapshot_xmin(pg_current_snapshot())
  ORDER BY c.txid, c.id
  LIMIT p_limit
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.change_feed(text, integer) IS 'Every recorded change exactly once, in commit-safe order: pass back the position of the last row processed (NULL: from the start). A change is served only once no open transaction could still write one before it.';--> statement-breakpoint
-- How long the feed is held back, and by whom. An open write transaction is one with a transaction
-- id, in pg_stat_activity (every database of the server) or pg_prepared_xacts; the one holding the
-- feed is the oldest id (greatest age()). Not from the snapshot: an open transaction whose id is the
-- newest leaves xmin equal to xmax. The function runs as the owner of refdata (SECURITY DEFINER), so
-- every caller gets one answer: refdata_reader learns the holder's pid, application, state and start,
-- nothing of other sessions. pg_stat_activity shows a session's state and start only to its own role
-- and pg_read_all_stats: where even the owner may not see the holder's start, held_seconds is NULL
-- (held, for how long unknown), never 0. The caller's own transaction counts like any other.
CREATE FUNCTION refdata.change_feed_held(
  OUT held_seconds double precision, OUT pid integer, OUT application_name text, OUT state text, OUT xact_start timestamptz
)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  WITH holders AS (
    SELECT a.pid, a.backend_xid AS xid, a.application_name, a.state, a.xact_start
    FROM pg_stat_activity a
    WHERE a.backend_xid IS NOT NULL
    UNION ALL
    SELECT NULL, p.transaction, 'prepared transaction ' || p.gid, 'prepared', p.prepared FROM pg_prepared_xacts p
  ), oldest AS (
    SELECT h.* FROM holders h ORDER BY age(h.xid) DESC LIMIT 1
  )
  -- No greatest(0, ...) around the age: it would read a hidden start as 0.
  SELECT CASE WHEN o.xid IS NULL THEN 0 ELSE extract(epoch FROM clock_timestamp() - o.xact_start)::double precision END,
         o.pid, o.application_name, o.state, o.xact_start
  FROM (SELECT) AS one LEFT JOIN oldest o ON true
$$;
--> statement-breakpoint
COMMENT ON FUNCTION refdata.change_feed_held() IS 'How long refdata.change_feed has been held back by the oldest open write transaction in the cluster (0 when none; NULL when the owner of refdata may not see when it began), and which session holds it. Runs as the owner of refdata.';--> statement-breakpoint
-- The reader role stays read-only: `refsync changes --consumer` stores positions as refsync's own role
-- (or a role an administrator grants INSERT and UPDATE on this table).
GRANT SELECT ON refdata.change_feed_consumers TO refdata_reader;--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION refdata.change_feed_position(xid8, bigint), refdata.change_feed_after(text), refdata.change_feed(text, integer),
  refdata.change_feed_held() FROM PUBLIC;--> statement-breakpoint
GRANT EXECUTE ON FUNCTION refdata.change_feed_position(xid8, bigint), refdata.change_feed_after(text), refdata.change_feed(text, integer),
  refdata.change_feed_held() TO refdata_reader;
