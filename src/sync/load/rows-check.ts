import type { Target } from '../../catalog/targets.ts';
import type { Connection } from '../../db/database.ts';
import type { CollectedList } from '../collect/collect.ts';
import type { NormalizedEntry } from '../collect/normalize.ts';
import { CurrentRowsCheck } from './large/current-rows-check.ts';

/**
 * Which fetched rows a load still has to write. A small list is written whole, so until the list
 * proves large (tuning.indexAfterEntries received, or its first spill) nothing of the large-list
 * path exists; then, where an index may be used (tuning.currentRowIndex, COPY), the check against
 * the current rows is made (large/current-rows-check.ts) and answers from then on.
 */
export class RowsCheck {
  readonly #conn: Connection;
  readonly #target: Target;
  #enabled: boolean;
  readonly #indexAfterEntries: number;
  #current: CurrentRowsCheck | undefined;

  constructor(conn: Connection, target: Target, enabled: boolean, indexAfterEntries: number) {
    this.#conn = conn;
    this.#target = target;
    this.#enabled = enabled;
    this.#indexAfterEntries = indexAfterEntries;
  }

  /** The check against the current rows, once the list proved large and may use one. */
  get current(): CurrentRowsCheck | undefined {
    return this.#current;
  }

  #large(): CurrentRowsCheck | undefined {
    if (this.#enabled) this.#current ??= new CurrentRowsCheck(this.#conn, this.#target);
    return this.#current;
  }

  /** Called with the entries read so far: the list proves large at indexAfterEntries. */
  observe(received: number): void {
    if (received >= this.#indexAfterEntries) this.readIndexNow();
  }

  /**
   * Starts the index read now (CurrentRowsCheck#readNow): the list proved large (observe), or is
   * known large before its fetch proves it (its last sync, or the memory budget it was admitted to).
   */
  readIndexNow(): void {
    this.#large()?.readNow();
  }

  /** Whether a fetched row may need writing (CurrentRowsCheck#keeps); every row of a small list does. */
  keeps(row: NormalizedEntry): boolean {
    return this.#current?.keeps(row) ?? true;
  }

  /** Rows kept before the index could match them, checked again against what it has read since (CurrentRowsCheck#recheck). */
  recheck(rows: NormalizedEntry[]): NormalizedEntry[] {
    return this.#current ? this.#current.recheck(rows) : rows;
  }

  /** Whether an index of current rows has been read whole: the rows kept since are only the ones to write. */
  get onlyChangesKept(): boolean {
    return this.#current?.onlyChangesKept ?? false;
  }

  /** The rows to write of a spill: the list is large now (CurrentRowsCheck#unmatched). */
  async unmatched(rows: NormalizedEntry[]): Promise<NormalizedEntry[]> {
    const current = this.#large();
    return current ? current.unmatched(rows) : rows;
  }

  /** Waits for an index read in flight (CurrentRowsCheck#readsEnded). */
  async readsEnded(): Promise<void> {
    await this.#current?.readsEnded();
  }

  /** No check for this fetch from now on (CurrentRowsCheck#off): a first load has no current rows. */
  off(): void {
    this.#enabled = false;
    this.#current?.off();
  }

  /** The collected list, checked when the list proved large (CurrentRowsCheck#finish). */
  async finish(collected: CollectedList): Promise<CollectedList> {
    return this.#current ? this.#current.finish(collected) : collected;
  }
}
