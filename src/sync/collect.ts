import type { ListDefinition } from '../catalog/catalog.ts';
import type { ColumnType } from '../columns/column-type.ts';
import { ContentHasher } from './content-hash.ts';
import type { IndexMatch } from './current-index.ts';
import { FieldTracker, normalizeEntry, type NormalizedEntry } from './normalize.ts';

/** What one fetch of a list amounts to once every page has been read. */
export interface CollectedList {
  contentHash: string;
  entryCount: number;
  pages: number;
  fields: string[];
  /** The column type each top-level field's values infer (the views' typed columns follow them). */
  columnTypes: Map<string, ColumnType>;
  /** Rows not yet written to staging (all of them for small lists), less the ones `keep` dropped. */
  pending: NormalizedEntry[];
  /**
   * Set when the rows were checked against an index of the current rows: only the rows that are
   * not current as fetched were staged, and these are the current rows nothing matched.
   */
  index?: IndexMatch;
}

export interface CollectorOptions {
  /** Rows kept in memory before they are handed to `spill` (large lists stream through). */
  spillThreshold: number;
  spill: (rows: NormalizedEntry[]) => Promise<void>;
  /**
   * Whether a row must be kept for the database (default: all). A row already current as fetched
   * is hashed and counted, then dropped at once: held until a spill, a million of them would
   * outlive the young generation and cost the collector's GC most of its time.
   */
  keep?: (row: NormalizedEntry) => boolean;
}

/**
 * Reads a list page by page: normalises each entry, tracks its fields, and feeds its key and digest
 * to the canonical hash; the rows themselves are buffered up to a threshold and then spilled to
 * staging, so a million-entry list is never held whole.
 */
export class ListCollector {
  readonly #list: ListDefinition;
  readonly #options: CollectorOptions;
  readonly #fields = new FieldTracker();
  readonly #hasher: ContentHasher;
  #received = 0;
  #buffer: NormalizedEntry[] = [];
  #pages = 0;

  constructor(list: ListDefinition, options: CollectorOptions) {
    this.#list = list;
    this.#options = options;
    this.#hasher = new ContentHasher(list.key);
  }

  /** Entries read so far, duplicates included. */
  get received(): number {
    return this.#received;
  }

  async addPage(entries: readonly unknown[]): Promise<void> {
    this.#pages += 1;
    const keep = this.#options.keep;
    for (const raw of entries) {
      const row = normalizeEntry(this.#list, raw, this.#received);
      this.#received += 1;
      this.#fields.observe(raw);
      this.#hasher.add(row.entryKey, row.digest);
      if (!keep || keep(row)) this.#buffer.push(row);
    }
    if (this.#buffer.length >= this.#options.spillThreshold) {
      const rows = this.#buffer;
      this.#buffer = [];
      await this.#options.spill(rows);
    }
  }

  /** The fetch as a whole, once every page has been added; throws on two entries under one key. */
  finish(): CollectedList {
    const { contentHash, entryCount } = this.#hasher.finish();
    return {
      contentHash,
      entryCount,
      pages: this.#pages,
      fields: this.#fields.signature(),
      columnTypes: this.#fields.columnTypes(),
      pending: this.#buffer,
    };
  }
}
