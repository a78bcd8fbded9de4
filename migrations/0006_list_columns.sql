-- The recorded schema of the per-list views: the typed column of every field each list serves.
-- The views themselves are (re)created from it by refsync (src/columns/list-views.ts), at migrate
-- time and, in the same transaction as the data, at the sync that sees a new field or type.
CREATE TABLE "refdata"."list_columns" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"list_key" text NOT NULL,
	"field" text NOT NULL,
	"column_name" text NOT NULL,
	"position" integer NOT NULL,
	"data_type" text NOT NULL,
	"first_snapshot_id" bigint,
	"last_snapshot_id" bigint,
	"recorded_at" timestamp with time zone DEFAULT now() NOT NULL,
	"replaced_at" timestamp with time zone
);
--> statement-breakpoint
CREATE UNIQUE INDEX "list_columns_field_uq" ON "refdata"."list_columns" USING btree ("list_key","field") WHERE replaced_at is null;
--> statement-breakpoint
CREATE UNIQUE INDEX "list_columns_name_uq" ON "refdata"."list_columns" USING btree ("list_key","column_name") WHERE replaced_at is null;
--> statement-breakpoint
COMMENT ON TABLE refdata.list_columns IS 'The typed columns of each per-list view, one row per field and type it has had: the row without replaced_at is the column as the view has it now.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.list_columns.id IS 'Row id.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.list_columns.list_key IS 'Which reference list (the view refdata.<list_key>).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.list_columns.field IS 'The top-level field as the service serves it.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.list_columns.column_name IS 'The view column that holds it (the field name, or its documented folding).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.list_columns.position IS 'Order of the column among the typed columns of the view.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.list_columns.data_type IS 'Inferred type: boolean, bigint, numeric, date, timestamptz, text, jsonb, or null (only nulls seen yet; read as text).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.list_columns.first_snapshot_id IS 'Snapshot that first served the field with this type; null when inferred from the stored history at upgrade.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.list_columns.last_snapshot_id IS 'Last applied snapshot that served the field (unchanged fetches do not move it).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.list_columns.recorded_at IS 'When the column got this type.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.list_columns.replaced_at IS 'When a wider type replaced this one; null for the type the view has now.';
--> statement-breakpoint
GRANT SELECT ON refdata.list_columns TO refdata_reader;
