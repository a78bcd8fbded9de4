ALTER TABLE "refdata"."alerts" ADD COLUMN "requeued_at" timestamp with time zone;--> statement-breakpoint
COMMENT ON COLUMN refdata.alerts.requeued_at IS 'When refsync alerts retry last requeued the alert; its retry budget (hours of backoff) counts from then, else from created_at.';
