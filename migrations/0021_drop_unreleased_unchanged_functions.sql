-- Two internal functions nothing calls any more, dropped.
--
-- refdata.record_unchanged and refdata.lock_target_state_or_record_unchanged each wrote the
-- unchanged record of one list; refdata.record_unchanged_lists is now its one writer (a single list
-- is a batch of one), and every snapshot row goes through refdata.write_snapshots (migration 0020).
-- No release ever called them: they came after 0.2.0, whose workers make neither call, so dropping
-- them breaks no worker during a rolling upgrade.
DROP FUNCTION refdata.record_unchanged(text, text, text, text, bigint, integer, text[], integer, integer, integer, boolean);
--> statement-breakpoint
DROP FUNCTION refdata.lock_target_state_or_record_unchanged(text, text, text, text, bigint, integer, text[], integer, integer, integer);
