-- refdata.change_feed_held() as 0015 defined it said "not held" (0) in two cases where a write
-- transaction was open, the very ones its metric, alert and `refsync status` exist for:
--
-- 1. An open transaction whose id is the newest: the snapshot's xmin equals its xmax (xmax is the
--    latest completed id + 1, and ids at or above it are all "running"), which 0015 read as "none
--    open". A forgotten `begin; insert ...` read 0 until some later transaction committed.
-- 2. Another role's session, read by a role without pg_read_all_stats: pg_stat_activity shows every
--    session's pid, application_name and backend_xid to any role, its state and xact_start only to
--    its own role and pg_read_all_stats. The holder was found and its hidden age read as 0.
--
-- Now an open write transaction is one with a transaction id, in pg_stat_activity (every database of
-- the cluster) or pg_prepared_xacts; the one holding the feed is the oldest id (greatest age()), the
-- fence of refdata.change_feed. The function runs as the owner of refdata (SECURITY DEFINER,
-- refsync's own role), so every caller gets one answer: refdata_reader learns the holder's pid,
-- application, state and start, nothing of other sessions. Where even the owner may not see the
-- holder's start (refsync's role without pg_read_all_stats: docs/production.md, "A held change
-- feed"), held_seconds is NULL: held, for how long unknown, never 0. The caller's own transaction
-- counts too: it holds the feed as much as any other.
CREATE OR REPLACE FUNCTION refdata.change_feed_held(
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
COMMENT ON FUNCTION refdata.change_feed_held() IS 'How long refdata.change_feed has been held back by the oldest open write transaction in the cluster (0 when none; NULL when the owner of refdata may not see when it began), and which session holds it. Runs as the owner of refdata.';
