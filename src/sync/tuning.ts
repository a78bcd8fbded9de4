/**
 * The numbers that decide which way a fetched list takes to the database. They depend on each
 * other (the index must be read before the first spill, a spill must be large enough for COPY), so
 * they live together; docs/performance.md has the measurements behind each default.
 */
export interface SyncTuning {
  /** Rows held in memory before they stream to the database (staging table, or a direct first load). */
  spillThreshold: number;
  /**
   * Rows per spill once a list streams (after its first spill). Smaller than spillThreshold: each
   * row held until its spill outlives V8's young generation, and the old one is let grow to about
   * four times what is live before it is collected; at a million entries, 5,000 rather than 20,000
   * took ~50 MiB off a first load's peak RSS for ~7% more CPU (docs/performance.md, P3 and P6).
   */
  spillEvery: number;
  /**
   * Entries received before the current rows' index is read, so that it is ready by the first spill
   * without holding up the fetch. Keep it well below spillThreshold.
   */
  indexAfterEntries: number;
  /**
   * Whether a large resync checks fetched rows against an index of the current rows and stages only
   * the ones that differ (needs COPY). Without it a resync stages every row.
   */
  currentRowIndex: boolean;
  /**
   * Batches of at least this many rows are written with COPY; below it one unnest statement is as
   * quick. Also one write's worth: a large list whose index has been read spills its changed rows
   * from this many on.
   */
  copyMinRows: number;
  /**
   * Staged rows above which the staging and diff tables are ANALYZEd before the diff is planned; and
   * rows a sync changed from which refdata.entries is analyzed after its commit, when they are also a
   * tenth of the table (entry-statistics.ts).
   */
  analyzeAfterRows: number;
  /**
   * Entries in key order after which the content hash lets go of the lines it kept in case a key
   * comes out of order (about 50 bytes an entry). A list out of order past it is fetched again.
   */
  hashKeepEntries: number;
}

export const defaultTuning: Readonly<SyncTuning> = Object.freeze({
  spillThreshold: 20_000,
  spillEvery: 5_000,
  indexAfterEntries: 5_000,
  currentRowIndex: true,
  copyMinRows: 1_000,
  analyzeAfterRows: 10_000,
  hashKeepEntries: 100_000,
});

/** The defaults with the given settings over them. */
export function tuningWith(overrides: Partial<SyncTuning> = {}): SyncTuning {
  return { ...defaultTuning, ...overrides };
}
