import type { Target } from '../catalog/catalog.ts';
import type { Database } from '../db/database.ts';
import { lastListSizes } from './list-sizes-sql.ts';

/**
 * Bytes a large list holds per entry while it syncs: the content hash's key and digest, the index
 * of its current rows, and what V8 keeps between collections. Measured: a million entries of
 * nmfc_codes peak near 230 MiB above an idle process (docs/performance.md, P3 and P6).
 */
export const BYTES_PER_ENTRY = 256;

/** A large list of unknown size (never synced by this database) is counted as a million entries. */
export const UNKNOWN_LIST_BYTES = 1_000_000 * BYTES_PER_ENTRY;

/** What the worker keeps for itself and its small lists, outside the large lists' shares. */
export const WORKER_SHARE_BYTES = 192 * 1024 * 1024;

function keyOf(environment: string, list: string, variant: string): string {
  return `${environment}\u0000${list}\u0000${variant}`;
}

/**
 * Each target's entry count as last synced: read once when the worker starts (the last ok snapshot
 * of each, refdata.target_last_ok), then kept from the worker's own outcomes and from what each run
 * job reads of its source (inline-targets.ts). One read for all targets rather than one per target
 * job, whose round trip every unchanged sync would pay.
 */
export class ListSizes {
  readonly #entries = new Map<string, number>();

  static async read(db: Database): Promise<ListSizes> {
    const sizes = new ListSizes();
    const { rows } = await db.query<{ environment: string; list_key: string; variant: string; entry_count: number }>(lastListSizes);
    for (const row of rows) sizes.#entries.set(keyOf(row.environment, row.list_key, row.variant), row.entry_count);
    return sizes;
  }

  /** Entries at the target's last sync, if it has one. */
  entriesOf(target: Target): number | undefined {
    return this.#entries.get(keyOf(target.source.environment, target.list.key, target.variant));
  }

  learn(target: Target, entries: number): void {
    this.#entries.set(keyOf(target.source.environment, target.list.key, target.variant), entries);
  }
}

/**
 * The share a large list reserves: its last entry count (or what this fetch has already received,
 * if more) at BYTES_PER_ENTRY, and UNKNOWN_LIST_BYTES for a list seen for the first time.
 */
export function listBytes(lastEntries: number | undefined, received = 0): number {
  if (lastEntries === undefined) return Math.max(UNKNOWN_LIST_BYTES, received * BYTES_PER_ENTRY);
  return Math.max(lastEntries, received) * BYTES_PER_ENTRY;
}
