-- run_completed alerts: an outbox row about a whole run, not about one snapshot.
ALTER TABLE "refdata"."alerts" ADD COLUMN "run_id" bigint;--> statement-breakpoint
ALTER TABLE "refdata"."alerts" ADD CONSTRAINT "alerts_run_id_sync_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "refdata"."sync_runs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "refdata"."alerts" ALTER COLUMN "snapshot_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "refdata"."alerts" ADD CONSTRAINT "alerts_subject_ck" CHECK ("snapshot_id" IS NOT NULL OR "run_id" IS NOT NULL);--> statement-breakpoint
CREATE UNIQUE INDEX "alerts_run_kind_uq" ON "refdata"."alerts" USING btree ("run_id","kind") WHERE "run_id" IS NOT NULL;--> statement-breakpoint
COMMENT ON COLUMN refdata.alerts.run_id IS 'The sync run a run_completed alert reports on; null for alerts about one snapshot.';--> statement-breakpoint
COMMENT ON COLUMN refdata.alerts.kind IS 'added, removed, modified, reappeared, schema_changed, held, failed or run_completed.';--> statement-breakpoint
COMMENT ON COLUMN refdata.alerts.snapshot_id IS 'The snapshot the alert reports on; null for run_completed, which reports on a run (run_id).';--> statement-breakpoint
-- The last ok snapshot of every target, kept by a trigger: what /metrics reads at every scrape,
-- instead of a distinct on over every snapshot ever taken.
CREATE TABLE "refdata"."target_last_ok" (
	"environment" text NOT NULL,
	"list_key" text NOT NULL,
	"variant" text NOT NULL,
	"snapshot_id" bigint NOT NULL,
	"fetched_at" timestamp with time zone NOT NULL,
	"entry_count" integer,
	CONSTRAINT "target_last_ok_pk" PRIMARY KEY ("environment","list_key","variant")
);--> statement-breakpoint
COMMENT ON TABLE refdata.target_last_ok IS 'The last ok snapshot of each target (environment, list, variant), kept up to date by a trigger on refdata.snapshots; what the metrics read.';--> statement-breakpoint
COMMENT ON COLUMN refdata.target_last_ok.environment IS 'Environment label of the source.';--> statement-breakpoint
COMMENT ON COLUMN refdata.target_last_ok.list_key IS 'Which reference list.';--> statement-breakpoint
COMMENT ON COLUMN refdata.target_last_ok.variant IS 'The carrier or charge-code version; empty for plain lists.';--> statement-breakpoint
COMMENT ON COLUMN refdata.target_last_ok.snapshot_id IS 'The last snapshot of the target with status ok.';--> statement-breakpoint
COMMENT ON COLUMN refdata.target_last_ok.fetched_at IS 'When that snapshot was fetched: the last success.';--> statement-breakpoint
COMMENT ON COLUMN refdata.target_last_ok.entry_count IS 'Entries in that snapshot.';--> statement-breakpoint
INSERT INTO "refdata"."target_last_ok" (environment, list_key, variant, snapshot_id, fetched_at, entry_count)
SELECT DISTINCT ON (environment, list_key, variant) environment, list_key, variant, id, fetched_at, entry_count
  FROM refdata.snapshots WHERE status = 'ok'
 ORDER BY environment, list_key, variant, id DESC;--> statement-breakpoint
CREATE FUNCTION refdata.track_last_ok() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
  INSERT INTO refdata.target_last_ok AS t (environment, list_key, variant, snapshot_id, fetched_at, entry_count)
  VALUES (NEW.environment, NEW.list_key, NEW.variant, NEW.id, NEW.fetched_at, NEW.entry_count)
  ON CONFLICT (environment, list_key, variant) DO UPDATE
    SET snapshot_id = excluded.snapshot_id, fetched_at = excluded.fetched_at, entry_count = excluded.entry_count
    WHERE t.snapshot_id < excluded.snapshot_id;
  RETURN NULL;
END;
$$;--> statement-breakpoint
COMMENT ON FUNCTION refdata.track_last_ok() IS 'Trigger function: records an ok snapshot in refdata.target_last_ok.';--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION refdata.track_last_ok() FROM PUBLIC;--> statement-breakpoint
CREATE TRIGGER "snapshots_track_last_ok" AFTER INSERT ON "refdata"."snapshots"
  FOR EACH ROW WHEN (NEW.status = 'ok') EXECUTE FUNCTION refdata.track_last_ok();--> statement-breakpoint
-- What retention (refsync prune) scans by age.
CREATE INDEX "snapshots_unchanged_age_idx" ON "refdata"."snapshots" USING btree ("fetched_at") WHERE status = 'ok' AND NOT changed;--> statement-breakpoint
CREATE INDEX "alerts_finished_age_idx" ON "refdata"."alerts" USING btree ("created_at") WHERE state IN ('delivered', 'skipped');--> statement-breakpoint
CREATE INDEX "sync_runs_finished_age_idx" ON "refdata"."sync_runs" USING btree ("finished_at") WHERE finished_at IS NOT NULL;
