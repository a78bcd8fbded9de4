import { createHash } from 'node:crypto';
import type { ListDefinition } from '../catalog/catalog.ts';
import { FieldTracker, normalizeEntry, type NormalizedEntry } from './normalize.ts';

export class DuplicateKeyError extends Error {
  readonly code = 'duplicate_key';
}

/** What one fetch of a list amounts to once every page has been read. */
export interface CollectedList {
  contentHash: string;
  entryCount: number;
  pages: number;
  fields: string[];
  /** Rows not yet written to staging (all of them for small lists). */
  pending: NormalizedEntry[];
}

export interface CollectorOptions {
  /** Rows kept in memory before they are handed to `spill` (large lists stream through). */
  spillThreshold: number;
  spill: (rows: NormalizedEntry[]) => Promise<void>;
}

/**
 * Reads a list page by page: normalises each entry, tracks its fields, and keeps only the key and
 * digest of each entry in memory for the canonical hash; the rows themselves are buffered up to a
 * threshold and then spilled to staging, so a million-entry list is never held whole.
 */
export class ListCollector {
  readonly #list: ListDefinition;
  readonly #options: CollectorOptions;
  readonly #fields = new FieldTracker();
  readonly #keyed: string[] = [];
  #buffer: NormalizedEntry[] = [];
  #pages = 0;
  #spilled = false;

  constructor(list: ListDefinition, options: CollectorOptions) {
    this.#list = list;
    this.#options = options;
  }

  get spilled(): boolean {
    return this.#spilled;
  }

  async addPage(entries: readonly unknown[]): Promise<void> {
    this.#pages += 1;
    for (const raw of entries) {
      const row = normalizeEntry(this.#list, raw, this.#keyed.length);
      this.#fields.observe(raw);
      this.#keyed.push(`${row.entryKey}\u0000${row.digest}`);
      this.#buffer.push(row);
    }
    if (this.#buffer.length >= this.#options.spillThreshold) {
      const rows = this.#buffer;
      this.#buffer = [];
      this.#spilled = true;
      await this.#options.spill(rows);
    }
  }

  /**
   * The canonical hash: sha-256 over `key NUL digest` lines sorted by key. Identical duplicates
   * collapse; two different entries under one key fail the list, naming the key.
   */
  finish(): CollectedList {
    this.#keyed.sort();
    const hash = createHash('sha256');
    let previous: string | undefined;
    let previousKey: string | undefined;
    let count = 0;
    for (const line of this.#keyed) {
      if (line === previous) continue;
      const key = line.slice(0, line.indexOf('\u0000'));
      if (key === previousKey) {
        throw new DuplicateKeyError(
          `${this.#list.key}: the key '${key}' appears twice with different contents`,
        );
      }
      hash.update(line).update('\n');
      previous = line;
      previousKey = key;
      count += 1;
    }
    this.#keyed.length = 0;
    return {
      contentHash: hash.digest('hex'),
      entryCount: count,
      pages: this.#pages,
      fields: this.#fields.signature(),
      pending: this.#buffer,
    };
  }
}
