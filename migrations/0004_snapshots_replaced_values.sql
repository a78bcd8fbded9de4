ALTER TABLE "refdata"."snapshots" ADD COLUMN "replaced_values" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
COMMENT ON COLUMN refdata.snapshots.replaced_values IS 'Strings (values and object keys, at any depth) in which NUL or lone surrogates, which Postgres cannot store, were replaced by U+FFFD.';
