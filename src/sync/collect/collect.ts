import type { ListDefinition } from '../../catalog/catalog.ts';
import type { FieldValues } from '../../columns/conformance.ts';
import { continuesPage } from '../../upstream/paging.ts';
import { ContentHasher, type HasherOptions } from './content-hash.ts';
import type { IndexMatch } from '../load/current-index.ts';
import { FieldTracker, normalizeEntry, type NormalizedEntry } from './normalize.ts';

/** What one fetch of a list amounts to once every page has been read. */
export interface CollectedList {
  contentHash: string;
  entryCount: number;
  pages: number;
  fields: string[];
  /** Strings whose NUL or lone surrogates were replaced by U+FFFD, across the list. */
  replacedValues: number;
  /** Entries holding such a string. */
  replacedEntries: number;
  /** The first REPLACED_KEYS_LOGGED entries with a replacement, for the log line. */
  replacedKeys: string[];
  /** Per top-level field, the column type its values infer and their types (the views' typed columns follow them). */
  fieldValues: Map<string, FieldValues>;
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
  /** Rows per spill once the list has spilled once (default spillThreshold): see tuning.ts. */
  spillEvery?: number;
  spill: (rows: NormalizedEntry[]) => Promise<void>;
  /**
   * Whether a row must be kept for the database (default: all). A row already current as fetched
   * is hashed and counted, then dropped at once: held until a spill, a million of them would
   * outlive the young generation and cost the collector's GC most of its time.
   */
  keep?: (row: NormalizedEntry) => boolean;
  /** How the content hash keeps lines for a key out of order (content-hash.ts); all of them by default. */
  hash?: HasherOptions;
}

/** Entry keys named in the log line about replacements: enough to find them, bounded for a million. */
export const REPLACED_KEYS_LOGGED = 20;

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
  #spilled = false;
  /** Rows per spill set after the first by the loader it chose (spillEach). */
  #spillEach: number | undefined;
  #pages = 0;
  #replacedValues = 0;
  #replacedEntries = 0;
  readonly #replacedKeys: string[] = [];

  constructor(list: ListDefinition, options: CollectorOptions) {
    this.#list = list;
    this.#options = options;
    this.#hasher = new ContentHasher(list.key, options.hash);
  }

  /** From the next spill on, spills every `rows` rows kept: the loader's choice (Loader#spillEach). */
  spillEach(rows: number): void {
    this.#spillEach = rows;
  }

  /** Entries read so far, duplicates included. */
  get received(): number {
    return this.#received;
  }

  /** Takes the next batch of entries: a page, or the continuation of a large one (which counts no page). */
  async addPage(entries: readonly unknown[]): Promise<void> {
    if (!continuesPage(entries)) this.#pages += 1;
    const keep = this.#options.keep;
    for (const raw of entries) {
      const row = normalizeEntry(this.#list, raw, this.#received, this.#fields);
      this.#received += 1;
      if (row.replaced > 0) this.#noteReplaced(row);
      this.#hasher.add(row.entryKey, row.digest);
      if (!keep || keep(row)) this.#buffer.push(row);
    }
    const threshold = this.#spilled ? (this.#spillEach ?? this.#options.spillEvery ?? this.#options.spillThreshold) : this.#options.spillThreshold;
    if (this.#buffer.length >= threshold) {
      const rows = this.#buffer;
      this.#buffer = [];
      this.#spilled = true;
      await this.#options.spill(rows);
    }
  }

  #noteReplaced(row: NormalizedEntry): void {
    this.#replacedValues += row.replaced;
    this.#replacedEntries += 1;
    if (this.#replacedKeys.length < REPLACED_KEYS_LOGGED) this.#replacedKeys.push(row.entryKey);
  }

  /** The fetch as a whole, once every page has been added; throws on two entries under one key. */
  finish(): CollectedList {
    const { contentHash, entryCount } = this.#hasher.finish();
    return {
      contentHash,
      entryCount,
      pages: this.#pages,
      fields: this.#fields.signature(),
      replacedValues: this.#replacedValues,
      replacedEntries: this.#replacedEntries,
      replacedKeys: this.#replacedKeys,
      fieldValues: this.#fields.fieldValues(),
      pending: this.#buffer,
    };
  }
}
