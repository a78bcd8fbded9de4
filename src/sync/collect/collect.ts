import type { ListDefinition } from '../../catalog/catalog.ts';
import type { FieldValues } from '../../columns/conformance.ts';
import type { ListBatch } from '../../upstream/list-batch.ts';
import { ContentHasher, type HasherOptions } from './content-hash.ts';
import type { IndexMatch } from '../load/large/current-index.ts';
import { FieldTracker } from '../../columns/field-tracker.ts';
import { normalizeEntry, type NormalizedEntry } from './normalize.ts';
import { ServedDigest } from './served-digest.ts';

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
  /** The digest of the entries as served (served-digest.ts), for a list small enough; else null. */
  servedDigest: string | null;
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
   * is hashed and counted, then dropped at once: kept until a spill, a million of them would
   * outlive the young generation and cost the collector's GC most of its time.
   */
  keep?: (row: NormalizedEntry) => boolean;
  /**
   * The rows still to keep of those kept so far, asked before they spill: `keep` may say more of a
   * row now than when it came (an index still being read). Rows it drops need no spill.
   */
  recheck?: (rows: NormalizedEntry[]) => NormalizedEntry[];
  /** Rows kept before the first spill, asked at each batch (default spillThreshold). */
  firstSpillAt?: () => number;
  /** How the content hash keeps lines for a key out of order (content-hash.ts); all of them by default. */
  hash?: HasherOptions;
  /**
   * A list of at most this much is digested as served (served-digest.ts), and with `keepRaw` its
   * batches are kept raw, as they came, until the fetch ends (ListCollector#servedDigest says why). Past
   * either bound the list is not small: the raw batches are normalised then, and it has no digest.
   * Keep `entries` below the spill threshold and the index's start: a list kept raw never spills.
   */
  served?: { entries: number; chars: number; keepRaw: boolean };
}

/** The whole list summed up without its rows, from the snapshot whose served digest it has. */
export type SummedUp = Pick<CollectedList, 'contentHash' | 'entryCount' | 'fields'>;

/** Entry keys named in the log line about replacements: enough to find them, bounded for a million. */
export const REPLACED_KEYS_LOGGED = 20;

/**
 * Reads a list page by page: normalises each entry, tracks its fields, and feeds its key and digest
 * to the canonical hash; the rows themselves are buffered up to a threshold and then spilled to
 * staging, so a million-entry list is never in memory whole. A small list may be kept raw, as it came, until
 * its served digest is known (CollectorOptions.served).
 */
export class ListCollector {
  readonly #list: ListDefinition;
  readonly #options: CollectorOptions;
  readonly #fields = new FieldTracker();
  readonly #hasher: ContentHasher;
  #received = 0;
  /** Entries normalised so far: the index an entry is named by in errors. */
  #normalized = 0;
  /** The served text's digest, while the list is small (CollectorOptions.served); null once it is not. */
  #digest: ServedDigest | null;
  /** The digest once finished (servedDigest). */
  #digestHex: string | null | undefined;
  /** Batches taken in but not normalised yet (CollectorOptions.served.keepRaw). */
  #raw: unknown[][] = [];
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
    this.#digest = options.served ? new ServedDigest(list) : null;
  }

  /** From the next spill on, spills every `rows` rows kept: the loader's choice (Loader#spillEach). */
  spillEach(rows: number): void {
    this.#spillEach = rows;
  }

  /** Entries read so far, duplicates included. */
  get received(): number {
    return this.#received;
  }

  /** Takes the next batch: a page, or the continuation of a large one (which counts no page). */
  async addBatch(batch: ListBatch): Promise<void> {
    const { entries } = batch;
    if (!batch.continuesPage) this.#pages += 1;
    this.#received += entries.length;
    if (this.#digest) this.#digestServed(batch.servedText);
    if (this.#digest && this.#options.served!.keepRaw) {
      this.#raw.push(entries);
      return;
    }
    await this.#normaliseRaw();
    await this.#normalize(entries);
  }

  /** Adds a batch's served text to the digest while the list stays small; past that, or without it, the list has none. */
  #digestServed(text: string | null): void {
    const digest = this.#digest!;
    const bounds = this.#options.served!;
    if (text === null || this.#received > bounds.entries || digest.chars + text.length > bounds.chars) this.#digest = null;
    else digest.add(text);
  }

  /**
   * The digest of every entry as served, once the fetch has ended, for a list that stayed small; null
   * for a larger one. With `served.keepRaw` nothing is normalised yet: the caller compares it with the
   * last ok snapshot's first (rawDigest), and sums the list up from that snapshot (finishAsBefore)
   * when it is the same, which is the unchanged sync's usual case, or normalises it all (finish).
   */
  servedDigest(): string | null {
    if (this.#digestHex === undefined) this.#digestHex = this.#digest?.hex() ?? null;
    return this.#digestHex;
  }

  /**
   * The served digest while no entry has been normalised (every batch kept raw): only then does
   * summing the list up from the snapshot it matches (finishAsBefore) save anything.
   */
  rawDigest(): string | null {
    return this.#normalized === 0 ? this.servedDigest() : null;
  }

  /** Normalises the raw batches, in the order they came (the list is not small, or not as it was). */
  async #normaliseRaw(): Promise<void> {
    const raw = this.#raw;
    this.#raw = [];
    for (const entries of raw) await this.#normalize(entries);
  }

  async #normalize(entries: readonly unknown[]): Promise<void> {
    const keep = this.#options.keep;
    for (const raw of entries) {
      const row = normalizeEntry(this.#list, raw, this.#normalized, this.#fields);
      this.#normalized += 1;
      if (row.replaced > 0) this.#noteReplaced(row);
      this.#hasher.add(row.entryKey, row.digest);
      if (!keep || keep(row)) this.#buffer.push(row);
    }
    const threshold = this.#spilled
      ? (this.#spillEach ?? this.#options.spillEvery ?? this.#options.spillThreshold)
      : (this.#options.firstSpillAt?.() ?? this.#options.spillThreshold);
    if (this.#buffer.length >= threshold && this.#options.recheck) this.#buffer = this.#options.recheck(this.#buffer);
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

  /**
   * The fetch as it was last time: its served digest is `before`'s, so normalising would make the
   * same content hash, count and fields. Its rows are not made: only an unchanged sync may use it.
   * The batches stay raw: should the caller not take it as unchanged after all, finish() still
   * normalises every one.
   */
  finishAsBefore(before: SummedUp): CollectedList {
    return {
      ...before,
      pages: this.#pages,
      replacedValues: 0,
      replacedEntries: 0,
      replacedKeys: [],
      fieldValues: new Map(),
      pending: [],
      servedDigest: this.servedDigest(),
    };
  }

  /** The fetch as a whole, once every page has been added; throws on two entries under one key. */
  async finish(): Promise<CollectedList> {
    const servedDigest = this.servedDigest();
    await this.#normaliseRaw();
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
      servedDigest,
    };
  }
}
