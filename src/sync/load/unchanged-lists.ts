import { listVariant, type Target } from '../../catalog/targets.ts';
import type { Database } from '../../db/database.ts';
import type { SummedUp } from '../collect/collect.ts';
import type { TargetOutcome } from '../outcome/target-outcome.ts';
import { recordUnchangedListsStatement, type FetchedFields } from '../sql.ts';
import { lastOkOfSource } from './load-sql.ts';

/** A target's last ok snapshot as a run reads it before its lists: its size, content hash and served digest. */
export interface LastOk {
  entryCount: number;
  contentHash: string;
  fields: string[] | null;
  /** The digest of its entries as served (served-digest.ts); null for a large list, or one recorded without it. */
  servedDigest: string | null;
  replacedValues: number;
}

/** The last ok snapshot of each target of the environment, in one read (refdata.target_last_ok). */
export async function readLastOk(db: Database, environment: string): Promise<Map<string, LastOk>> {
  const { rows } = await db.query<{
    list_key: string;
    variant: string;
    entry_count: number;
    content_hash: string;
    fields: string[] | null;
    served_digest: string | null;
    replaced_values: number;
  }>(lastOkOfSource, [environment]);
  return new Map(
    rows.map((r) => [
      listVariant({ list: { key: r.list_key }, variant: r.variant }),
      { entryCount: r.entry_count, contentHash: r.content_hash, fields: r.fields, servedDigest: r.served_digest, replacedValues: r.replaced_values },
    ]),
  );
}

/** The target's entry in readLastOk's map. */
export function lastOkOf(lastOk: ReadonlyMap<string, LastOk>, target: Target): LastOk | undefined {
  return lastOk.get(listVariant(target));
}

/**
 * The unchanged lists of one run (a run job's, or a `refsync sync` source's), recorded together after
 * its last list. A list whose fetch has the content hash its last ok snapshot had when the run began
 * is set aside (no statement), and one statement records them all at the end
 * (refdata.record_unchanged_lists, migrations 0013, 0018 and 0020), each checked again under its lock: P4's hourly
 * slot made a statement per list. What that statement does not record (another sync changed or
 * holds the list meanwhile, its views wait) is the caller's to sync again; a list whose hash differs
 * takes the ordinary way at once.
 */
export class UnchangedLists {
  readonly #lastOk: ReadonlyMap<string, LastOk>;
  readonly #aside: Array<{ target: Target; fetched: FetchedFields }> = [];

  constructor(lastOk: ReadonlyMap<string, LastOk>) {
    this.#lastOk = lastOk;
  }

  /**
   * The target's last ok snapshot as the run read it, when the fetch's served digest is that
   * snapshot's: the fetch then has its content hash, count and fields without being normalised. Not
   * for a snapshot that replaced values, whose warning each fetch logs again with the keys.
   */
  servedBefore(target: Target, servedDigest: string | null): SummedUp | undefined {
    const last = lastOkOf(this.#lastOk, target);
    if (servedDigest === null || last?.servedDigest !== servedDigest || last.replacedValues > 0 || last.fields === null) return undefined;
    return { contentHash: last.contentHash, entryCount: last.entryCount, fields: last.fields };
  }

  /**
   * Sets the fetch aside, to be recorded with the others, when its hash is the one the run read;
   * false when it is not (changed, or never loaded).
   */
  setAside(target: Target, fetched: FetchedFields): boolean {
    const expected = lastOkOf(this.#lastOk, target)?.contentHash;
    if (expected === undefined || fetched.contentHash !== expected) return false;
    this.#aside.push({ target, fetched });
    return true;
  }

  /**
   * Records the lists set aside in one statement (a transaction of its own, its commit not waiting for
   * the WAL flush: the caller's count of the run's progress does). Each list's snapshot id, or null
   * for one not recorded.
   */
  async record(db: Database, runId: number): Promise<Map<Target, number | null>> {
    const recorded = new Map<Target, number | null>();
    if (this.#aside.length === 0) return recorded;
    const environment = this.#aside[0]!.target.source.environment;
    const rows = await db.withConnection((conn) => conn.alone(recordUnchangedListsStatement(environment, runId, this.#aside)));
    const ids = new Map(
      rows.map((r) => [listVariant({ list: { key: String(r.list_key) }, variant: String(r.variant) }), r.snapshot_id === null ? null : Number(r.snapshot_id)]),
    );
    for (const { target } of this.#aside) recorded.set(target, ids.get(listVariant(target)) ?? null);
    return recorded;
  }
}

/** A set-aside outcome once recorded as snapshot `snapshotId`. */
export function recordedOutcome(outcome: TargetOutcome, snapshotId: number): TargetOutcome {
  const { setAside: _recorded, ...synced } = outcome;
  return { ...synced, snapshotId };
}
