import type { Target } from '../../../catalog/catalog.ts';
import type { Connection } from '../../../db/database.ts';
import { keptEntry, type CollectedList, type NormalizedEntry } from '../../collect/collect.ts';
import { CurrentRowIndex } from './current-index.ts';

/**
 * Checks a large list's fetched rows against its current rows before they are staged, for one fetch
 * (src/sync/sync-target.ts#RowsCheck makes it once the list proves large and may use an index). Without an index every
 * row is staged.
 */
export class CurrentRowsCheck {
  readonly #conn: Connection;
  readonly #target: Target;
  /** Until a first load turns it off (off()) or the index is handed over (finish()). */
  #enabled = true;
  #index: Promise<CurrentRowIndex> | undefined;
  /** The index from its first row on: it matches what has been read so far. */
  #current: CurrentRowIndex | undefined;
  /** Whether #current has been read whole. */
  #whole = false;
  /** The rows read when kept rows were last checked again (recheck). */
  #recheckedAt = 0;

  constructor(conn: Connection, target: Target) {
    this.#conn = conn;
    this.#target = target;
  }

  /**
   * Starts the index read now (the list proved large, or was known large), unless one was started
   * or the check is off. RowsCheck says when.
   */
  readNow(): void {
    // The read is awaited by the first spill or at the end (see #start), not here.
    if (this.#enabled && !this.#index) void this.#start();
  }

  #start(): Promise<CurrentRowIndex> {
    this.#index = CurrentRowIndex.read(this.#conn, this.#target, (filling) => {
      this.#current = filling;
    });
    // Awaited by the first spill or at the end; until then a failure must not count as unhandled.
    this.#index.then(
      () => {
        this.#whole = true;
      },
      () => undefined,
    );
    return this.#index;
  }

  /** The index once read whole (the first spill awaits it: readsEnded()). */
  get index(): CurrentRowIndex | undefined {
    return this.#whole ? this.#current : undefined;
  }

  /**
   * Stops the check for a first load: there are no current rows to match, and the load's open
   * transaction holds the connection an index read would use.
   */
  off(): void {
    this.#enabled = false;
  }

  /** Waits for an index read in flight, which holds the connection (its failure is thrown later, where the index is used). */
  async readsEnded(): Promise<void> {
    await this.#index?.catch(() => undefined);
  }

  /**
   * The fetched row to keep for staging (a copy: keptEntry), or undefined to drop it: a row not
   * current as fetched among the rows the index has read so far. Never waits: a row kept before the
   * index had its match is checked again (recheck) or at the spill.
   */
  kept(row: NormalizedEntry): NormalizedEntry | undefined {
    return this.#current?.match(row) ? undefined : keptEntry(row);
  }

  /**
   * Rows kept before the index had read their match, checked again against what it has read since:
   * the ones still to keep. Before its first spill a list kept what the index could not yet match;
   * matched now, those rows need no spill, and the fetch goes on. Rows are checked again only when
   * the index has read more since the last time.
   */
  recheck(rows: NormalizedEntry[]): NormalizedEntry[] {
    const index = this.#current;
    if (!index || index.size === this.#recheckedAt) return rows;
    this.#recheckedAt = index.size;
    return index.unmatched(rows);
  }

  /**
   * Whether the index has been read whole and holds current rows: rows kept from now on are the
   * ones not current as fetched, to be written (with no current rows, every row is).
   */
  get onlyChangesKept(): boolean {
    return this.#whole && this.#current!.size > 0;
  }

  /** The rows to stage: all of them, or with an index the ones not current as fetched. */
  async unmatched(rows: NormalizedEntry[]): Promise<NormalizedEntry[]> {
    if (!this.#enabled) return rows;
    return (await (this.#index ?? this.#start())).unmatched(rows);
  }

  /** The collected list, with its pending rows checked and the index's result when one was read. */
  async finish(collected: CollectedList): Promise<CollectedList> {
    if (!this.#index) return collected;
    const index = await this.#index;
    const checked = { ...collected, pending: index.unmatched(collected.pending), index: index.result() };
    // The apply needs only the result: the index's arrays (about 46 bytes a current row) go now,
    // before it, not when the sync ends. A later call stages every row, as without an index.
    this.#index = undefined;
    this.#current = undefined;
    this.#whole = false;
    this.#enabled = false;
    return checked;
  }
}
