CREATE SCHEMA "refdata";
--> statement-breakpoint
CREATE TABLE "refdata"."alerts" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"snapshot_id" bigint NOT NULL,
	"kind" text NOT NULL,
	"payload" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"delivered_at" timestamp with time zone,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"environment" text NOT NULL,
	"list_key" text NOT NULL,
	"variant" text DEFAULT '' NOT NULL,
	"state" text DEFAULT 'pending' NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "refdata"."entries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"environment" text NOT NULL,
	"list_key" text NOT NULL,
	"variant" text DEFAULT '' NOT NULL,
	"entry_key" text NOT NULL,
	"code" text,
	"description" text,
	"payload" jsonb NOT NULL,
	"entry_hash" text NOT NULL,
	"valid_from" timestamp with time zone NOT NULL,
	"valid_to" timestamp with time zone,
	"first_snapshot_id" bigint NOT NULL,
	"last_snapshot_id" bigint
);
--> statement-breakpoint
CREATE TABLE "refdata"."entry_changes" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"snapshot_id" bigint NOT NULL,
	"environment" text NOT NULL,
	"list_key" text NOT NULL,
	"variant" text DEFAULT '' NOT NULL,
	"entry_key" text NOT NULL,
	"code" text,
	"change" text NOT NULL,
	"before" jsonb,
	"after" jsonb,
	"changed_fields" text[],
	"detected_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "refdata"."snapshots" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"run_id" bigint,
	"environment" text NOT NULL,
	"list_key" text NOT NULL,
	"variant" text DEFAULT '' NOT NULL,
	"fetched_at" timestamp with time zone DEFAULT now() NOT NULL,
	"status" text NOT NULL,
	"content_hash" text,
	"entry_count" integer,
	"changed" boolean DEFAULT false NOT NULL,
	"added" integer DEFAULT 0 NOT NULL,
	"removed" integer DEFAULT 0 NOT NULL,
	"modified" integer DEFAULT 0 NOT NULL,
	"reappeared" integer DEFAULT 0 NOT NULL,
	"error" text,
	"error_code" text,
	"fields" text[],
	"pages" integer,
	"duration_ms" integer
);
--> statement-breakpoint
CREATE TABLE "refdata"."sync_runs" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"environment" text NOT NULL,
	"trigger" text NOT NULL,
	"status" text DEFAULT 'running' NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	"error" text,
	"source" text DEFAULT '' NOT NULL,
	"slot" text,
	"targets_total" integer DEFAULT 0 NOT NULL,
	"targets_done" integer DEFAULT 0 NOT NULL,
	"targets_failed" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "refdata"."webhook_endpoints" (
	"url" text PRIMARY KEY NOT NULL,
	"disabled_at" timestamp with time zone,
	"reason" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "refdata"."alerts" ADD CONSTRAINT "alerts_snapshot_id_snapshots_id_fk" FOREIGN KEY ("snapshot_id") REFERENCES "refdata"."snapshots"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "refdata"."entry_changes" ADD CONSTRAINT "entry_changes_snapshot_id_snapshots_id_fk" FOREIGN KEY ("snapshot_id") REFERENCES "refdata"."snapshots"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "refdata"."snapshots" ADD CONSTRAINT "snapshots_run_id_sync_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "refdata"."sync_runs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "alerts_snapshot_kind_uq" ON "refdata"."alerts" USING btree ("snapshot_id","kind");--> statement-breakpoint
CREATE INDEX "alerts_pending_idx" ON "refdata"."alerts" USING btree ("next_attempt_at") WHERE state = 'pending';--> statement-breakpoint
CREATE UNIQUE INDEX "entries_current_uq" ON "refdata"."entries" USING btree ("environment","list_key","variant","entry_key") WHERE valid_to is null;--> statement-breakpoint
CREATE INDEX "entries_history_idx" ON "refdata"."entries" USING btree ("environment","list_key","variant","entry_key","valid_from");--> statement-breakpoint
CREATE INDEX "entry_changes_detected_idx" ON "refdata"."entry_changes" USING btree ("detected_at");--> statement-breakpoint
CREATE INDEX "entry_changes_target_idx" ON "refdata"."entry_changes" USING btree ("environment","list_key","variant","detected_at");--> statement-breakpoint
CREATE INDEX "entry_changes_snapshot_idx" ON "refdata"."entry_changes" USING btree ("snapshot_id");--> statement-breakpoint
CREATE INDEX "snapshots_target_idx" ON "refdata"."snapshots" USING btree ("environment","list_key","variant","id");--> statement-breakpoint
CREATE INDEX "snapshots_last_ok_idx" ON "refdata"."snapshots" USING btree ("environment","list_key","variant","id") WHERE status = 'ok';--> statement-breakpoint
CREATE INDEX "snapshots_run_idx" ON "refdata"."snapshots" USING btree ("run_id");--> statement-breakpoint
CREATE INDEX "sync_runs_environment_started_idx" ON "refdata"."sync_runs" USING btree ("environment","started_at");--> statement-breakpoint
CREATE UNIQUE INDEX "sync_runs_source_slot_uq" ON "refdata"."sync_runs" USING btree ("source","slot");