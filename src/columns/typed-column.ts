import type { ColumnType } from './column-type.ts';

/** One typed column of a per-list view, as recorded in refdata.list_columns. */
export interface TypedColumn {
  /** The top-level field as the service serves it. */
  field: string;
  column: string;
  type: ColumnType;
  position: number;
  /** When the field was first recorded, and in which snapshot (null: inferred from stored history). */
  since: Date;
  sinceSnapshot: number | null;
}
