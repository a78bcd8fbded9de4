// The sync's SQL, by name (docs/architecture.md, "Where SQL lives"): the statements on
// refdata.snapshots and refdata.entries, each named once with the column lists it shares, then the
// runs, then how a row is written as text for COPY and the inserts. The statements on a load's
// session tables (staging, diff) are in load/load-sql.ts.
import pg from 'pg';
import type { Target } from '../catalog/catalog.ts';
import { bigintArrayText, type Queryable } from '../db/database.ts';
import type { ChangeKind } from './outcome/target-outcome.ts';
import { cutToBytes } from '../util/bounded-text.ts';
import { storableText, type NormalizedEntry } from './collect/collect.ts';
import { ALERT_CHANNEL } from '../alerts/outbox-sql.ts';

/** An entry's own columns, in the order staging, unnest, COPY and the inserts all use. */
export const ENTRY_ROW_COLUMNS = 'entry_key, code, description, payload, entry_hash';

/** The target a statement is about, bound as three parameters from `first` (see targetParams). */
export function targetIs(alias = '', first = 1): string {
  const a = alias ? `${alias}.` : '';
  return `${a}environment = $${first} and ${a}list_key = $${first + 1} and ${a}variant = $${first + 2}`;
}

/** targetIs with the target's names quoted in its text, for a statement without parameters (an opening, a COPY). */
export function targetIsQuoted(target: Target): string {
  const [environment, listKey, variant] = quotedTargetParams(target);
  return `environment = ${environment} and list_key = ${listKey} and variant = ${variant}`;
}

/** The parameters of targetIs, in its order. */
export function targetParams(target: Target): [string, string, string] {
  return [target.source.environment, target.list.key, target.variant];
}

/** targetParams as SQL literals, for a statement whose values are quoted in its text. */
function quotedTargetParams(target: Target): string[] {
  return targetParams(target).map((v) => pg.escapeLiteral(v));
}

/** Whether a run already has a snapshot of a target ($1: the run; then the target, as targetParams). */
export const snapshotInRun = `select 1 from refdata.snapshots where run_id = $1 and ${targetIs('', 2)} limit 1`;

/** SQL for the next snapshot id, reserved ahead by a load that writes its rows first (refdata.write_snapshots takes it otherwise). */
export const nextSnapshotId = "nextval(pg_get_serial_sequence('refdata.snapshots', 'id'))";

/** Reserves the next snapshot id ahead of the snapshot (a direct or streamed load writes its rows first). */
export const reserveSnapshotId = `select ${nextSnapshotId} as id`;

/**
 * One 64-bit advisory lock key per target (environment, list, variant), defined once in SQL
 * (refdata.target_lock_key, migration 0010): refdata.lock_target_state takes the same lock.
 */
const TARGET_LOCK_KEY = 'refdata.target_lock_key($1, $2, $3)';

/** Takes the target's lock for the rest of the transaction ($1..$3: the target). */
export const lockTargetKey = `select pg_advisory_xact_lock(${TARGET_LOCK_KEY})`;

/** The same lock, only if it is free now. */
export const tryLockTargetKey = `select pg_try_advisory_xact_lock(${TARGET_LOCK_KEY}) as locked`;

/** One snapshot row. What a failed fetch does not know (hash, counts, fields) is left null or zero. */
export interface SnapshotRow {
  /** An id reserved earlier (a direct load writes its rows before the snapshot); else the next one. */
  id?: number;
  runId: number | null;
  /** The apply's clock read under the lock; else the statement's own clock. */
  fetchedAt?: Date;
  status: 'ok' | 'held' | 'failed' | 'unavailable';
  changed: boolean;
  counts: Record<ChangeKind, number>;
  contentHash: string | null;
  entryCount: number | null;
  fields: string[] | null;
  pages: number | null;
  durationMs: number;
  replacedValues: number;
  /** The digest of the entries as served (src/sync/collect/collect.ts#ServedDigest); null for a large list or a failed fetch. */
  servedDigest: string | null;
  /** Values that did not fit their typed column. */
  nonconforming: number;
  /** A change of the list's columns its schema policy holds was applied on --accept-schema. */
  schemaAccepted: boolean;
  error: string | null;
  errorCode: string | null;
}

/**
 * The most a snapshot's `error` takes, in bytes as JSON text (so also as UTF-8): it quotes the
 * upstream (an error body, field names) and travels in alerts and the run's error.
 */
export const SNAPSHOT_ERROR_BYTES = 2000;

/** A snapshot's error as stored: cut to SNAPSHOT_ERROR_BYTES, and storable whatever the upstream put in it. */
function storedError(error: string | null): string | null {
  return error === null ? null : storableText(cutToBytes(error, SNAPSHOT_ERROR_BYTES));
}

/**
 * The one statement that writes snapshot rows: refdata.write_snapshots (migration 0020), which
 * refdata.record_unchanged_lists also writes through, so every row has the same columns. $1 is the
 * environment, $2 the rows as JSON (snapshotRowsJson). `flush: false` also sets the transaction's
 * synchronous_commit off, in the same statement (set_config in its FROM, evaluated once): one round
 * trip fewer than a SET LOCAL of its own, for the unchanged sync whose only row this is
 * (resync-apply.ts says why it may).
 */
function writeSnapshotsStatement(flush: boolean): string {
  const withoutFlush = flush ? '' : ", (select set_config('synchronous_commit', 'off', true)) as commit_without_flush";
  return `select w.id from refdata.write_snapshots($1, $2::jsonb) as w${withoutFlush}`;
}

/** Snapshot rows of targets of one environment as refdata.write_snapshots takes them. */
function snapshotRowsJson(snapshots: ReadonlyArray<{ target: Target; row: SnapshotRow }>): string {
  const rows = snapshots.map(({ target, row }) => ({
    id: row.id ?? null,
    run_id: row.runId,
    list_key: target.list.key,
    variant: target.variant,
    fetched_at: row.fetchedAt ?? null,
    status: row.status,
    content_hash: row.contentHash,
    entry_count: row.entryCount,
    changed: row.changed,
    added: row.counts.added,
    removed: row.counts.removed,
    modified: row.counts.modified,
    reappeared: row.counts.reappeared,
    reshaped: row.counts.reshaped,
    error: storedError(row.error),
    error_code: row.errorCode,
    fields: row.fields,
    pages: row.pages,
    duration_ms: Math.round(row.durationMs),
    replaced_values: row.replacedValues,
    nonconforming: row.nonconforming,
    schema_accepted: row.schemaAccepted,
    served_digest: row.servedDigest,
  }));
  return JSON.stringify(rows);
}

/**
 * Inserts the snapshot rows of targets of one environment in one statement: each with its reserved
 * id, or the next one. Their ids, in the order written (by reserved id, else as given).
 */
export async function insertSnapshots(
  tx: Queryable,
  environment: string,
  snapshots: ReadonlyArray<{ target: Target; row: SnapshotRow }>,
  options: { flush?: boolean } = {},
): Promise<number[]> {
  const { rows } = await tx.query<{ id: string | number }>(writeSnapshotsStatement(options.flush !== false), [environment, snapshotRowsJson(snapshots)]);
  return rows.map((r) => Number(r.id));
}

/** Inserts a snapshot row: insertSnapshots of one. */
export async function insertSnapshot(tx: Queryable, target: Target, row: SnapshotRow, options: { flush?: boolean } = {}): Promise<number> {
  const [id] = await insertSnapshots(tx, target.source.environment, [{ target, row }], options);
  return id!;
}

/**
 * Opens rows under a snapshot, current from `now`. The source's parameters are numbered from $6
 * (unnestRows(rows, 6)): the first five are the target, the time and the snapshot.
 */
export async function insertEntries(tx: Queryable, target: Target, now: Date, snapshotId: number, rows: Pick<RowSource, 'from' | 'params'>): Promise<void> {
  await tx.query(
    `insert into refdata.entries
       (environment, list_key, variant, ${ENTRY_ROW_COLUMNS}, valid_from, first_snapshot_id, last_snapshot_id)
     select $1, $2, $3, ${ENTRY_ROW_COLUMNS}, $4, $5, $5 from ${rows.from}`,
    [...targetParams(target), now, snapshotId, ...rows.params],
  );
}

/** COPY of entries with the target, time and snapshot in front of each row's own columns (copyChunks with a prefix). */
export const copyEntries = `copy refdata.entries (environment, list_key, variant, valid_from, first_snapshot_id, last_snapshot_id,
                                                  ${ENTRY_ROW_COLUMNS}) from stdin`;

/** A snapshot of the target as a load compares with it. */
export interface PreviousSnapshot {
  id: number;
  status: string;
  contentHash: string | null;
  fields: string[] | null;
  /** Distinct entries fetched (null for a snapshot that fetched nothing). */
  entryCount: number | null;
  nonconforming: number;
}

type SnapshotJson = {
  id: string | number;
  status: string;
  content_hash: string | null;
  fields: string[] | null;
  entry_count: number | null;
  nonconforming: number;
};
const previousOf = (json: SnapshotJson | null): PreviousSnapshot | undefined =>
  json
    ? {
        id: Number(json.id),
        status: json.status,
        contentHash: json.content_hash,
        fields: json.fields,
        entryCount: json.entry_count,
        nonconforming: json.nonconforming,
      }
    : undefined;

/** What an apply reads of its target: the clock, its last snapshots, and whether its list's views wait. */
export interface TargetStateRead {
  now: Date;
  lastOk?: PreviousSnapshot;
  last?: PreviousSnapshot;
  viewsWaiting: boolean;
}

/**
 * The clock, the target's last ok snapshot and its last snapshot of any status, and whether the
 * list's views wait to be re-created, in one round trip (refdata.target_state, migration 0010).
 * It names refdata.snapshots only: see target-state.ts for why the entries are asked apart.
 */
export async function clockAndLastSnapshots(q: Queryable, target: Target): Promise<TargetStateRead> {
  const { rows } = await q.query<StateRow>('select now, views_waiting, last_ok, last from refdata.target_state($1, $2, $3)', targetParams(target));
  return stateReadOf(rows[0]!);
}

/**
 * The statement that takes the target's lock for the rest of the transaction (target-lock.ts), then
 * reads as clockAndLastSnapshots does, after the lock (refdata.lock_target_state). Its values are
 * quoted in its text, so it can open a transaction in the BEGIN's own round trip; stateReadOf reads
 * its row.
 */
export function lockThenLastSnapshots(target: Target): string {
  return `select now, views_waiting, last_ok, last from refdata.lock_target_state(${quotedTargetParams(target).join(', ')})`;
}

/** What a fetch measured of its snapshot row, whatever the load then finds (src/sync/batch/apply-batch.ts#fetchedFields). */
export type FetchedFields = Pick<SnapshotRow, 'runId' | 'contentHash' | 'entryCount' | 'fields' | 'pages' | 'durationMs' | 'replacedValues' | 'servedDigest'>;

/** A whole number as SQL text; anything else is a bug upstream of the statement. */
export function sqlInteger(n: number | null): string {
  if (n === null) return 'null';
  const whole = Math.round(n);
  if (!Number.isSafeInteger(whole)) throw new Error(`not a whole number for SQL: ${n}`);
  return String(whole);
}

/**
 * The statement that records unchanged fetches, all of one environment, as a transaction of its own
 * (refdata.record_unchanged_lists, migration 0020): the only writer of the unchanged record, for a
 * run's lists set aside and for a target job's one list alike. One row per list: its snapshot's id,
 * or null when it was not recorded (its lock taken, its last ok snapshot changed meanwhile, its views
 * waiting: nothing written); and whether the run's progress was counted, which `advanceRun` asks for
 * once a list is recorded (a worker's target job), its commit then waiting for the WAL flush.
 */
export function recordUnchangedListsStatement(
  environment: string,
  runId: number | null,
  lists: ReadonlyArray<{ target: Target; fetched: FetchedFields }>,
  advanceRun = false,
): string {
  // Whole numbers checked as sqlInteger checks them: a fraction or NaN is a bug, refused here.
  const whole = (n: number | null) => (n === null ? null : Number(sqlInteger(n)));
  const json = lists.map(({ target, fetched }) => ({
    list_key: target.list.key,
    variant: target.variant,
    content_hash: fetched.contentHash,
    entry_count: whole(fetched.entryCount),
    fields: fetched.fields,
    pages: whole(fetched.pages),
    duration_ms: whole(fetched.durationMs),
    replaced_values: whole(fetched.replacedValues),
    served_digest: fetched.servedDigest,
  }));
  const args = [pg.escapeLiteral(environment), sqlInteger(runId), `${pg.escapeLiteral(JSON.stringify(json))}::jsonb`, String(advanceRun)];
  return `select list_key, variant, snapshot_id, run_advanced from refdata.record_unchanged_lists(${args.join(', ')})`;
}

type StateRow = { now: Date; last_ok: SnapshotJson | null; last: SnapshotJson | null; views_waiting: boolean };

/** The row of refdata.target_state or refdata.lock_target_state, as the apply uses it. */
export function stateReadOf(row: Record<string, unknown>): TargetStateRead {
  const r = row as StateRow;
  const result: TargetStateRead = { now: r.now, viewsWaiting: r.views_waiting };
  const lastOk = previousOf(r.last_ok);
  const last = previousOf(r.last);
  if (lastOk) result.lastOk = lastOk;
  if (last) result.last = last;
  return result;
}

/** Whether the target has any current rows. */
export async function hasCurrentRows(q: Queryable, target: Target): Promise<boolean> {
  const { rows } = await q.query<{ found: boolean }>(
    `select exists (select 1 from refdata.entries where ${targetIs()} and valid_to is null) as found`,
    targetParams(target),
  );
  return rows[0]?.found === true;
}

/** The target's current rows as the diff reads them: all of them, or only the ones an index left unmatched. */
export function currentRowsOf(target: Target, unseenIds: number[] | undefined): [string, unknown[]] {
  if (!unseenIds) {
    return [`select id, ${ENTRY_ROW_COLUMNS} from refdata.entries where ${targetIs()} and valid_to is null`, targetParams(target)];
  }
  // LIMIT keeps the lookup a nested loop on the primary key: flattened into a join, a stale row
  // estimate let the planner hash all current rows of the target instead (1.1 s at a million).
  return [
    `select e.* from unnest($1::bigint[]) as u(id)
     cross join lateral (select id, ${ENTRY_ROW_COLUMNS} from refdata.entries
                         where id = u.id and valid_to is null limit 1) e`,
    [bigintArrayText(unseenIds)],
  ];
}

/**
 * The top-level fields whose values differ between two payloads (SQL over the two expressions),
 * sorted; NULL when none do. Computed as a diff row is written, where both sides are in hand: the
 * change rows and the reshaped check read it from there. The keys of `before || after` are the
 * union of both key sets without the UNION's sort (a third less time for 10,000 changes).
 */
export function changedFieldsOf(before: string, after: string): string {
  return `(select array_agg(k order by k) from jsonb_object_keys(${before} || ${after}) k where ${before} -> k is distinct from ${after} -> k)`;
}

/**
 * The diff of staged rows against the current ones, as a temp table dropped at commit: one row per
 * key that was added, removed or whose hash differs, with both sides and, for a key on both, the
 * fields that differ.
 */
export async function createDiff(tx: Queryable, diff: string, staged: string, current: [string, unknown[]]): Promise<void> {
  await tx.query(
    `create temp table ${diff} on commit drop as
     select coalesce(s.entry_key, c.entry_key) as entry_key,
            case when c.entry_key is null then 'added' when s.entry_key is null then 'removed' else 'modified' end as change,
            s.code as new_code, s.description as new_description, s.payload as new_payload, s.entry_hash as new_hash,
            c.id as old_id, c.code as old_code, c.description as old_description, c.payload as old_payload,
            case when c.entry_key is not null and s.entry_key is not null then ${changedFieldsOf('c.payload', 's.payload')} end as changed_fields
     from (select distinct on (entry_key) * from ${staged} order by entry_key) s
     full join (${current[0]}) c on c.entry_key = s.entry_key
     where c.entry_key is null or s.entry_key is null or c.entry_hash <> s.entry_hash`,
    current[1],
  );
}

/**
 * Modified entries whose every changed top-level field is one that appeared in or left the list in
 * this snapshot (`fields`) are reshaped, not modified (one whose fields are all equal too).
 */
export async function markReshaped(tx: Queryable, diff: string, fields: string[]): Promise<void> {
  await tx.query(`update ${diff} set change = 'reshaped' where change = 'modified' and coalesce(changed_fields, '{}') <@ $1::text[]`, [fields]);
}

/**
 * Added keys the target had before (any closed row in its history) are reappeared, not added. The
 * versions snapshot `opened` opened already (a streamed resync's) are not history.
 */
export async function markReappeared(tx: Queryable, diff: string, target: Target, opened?: number): Promise<void> {
  await tx.query(
    `update ${diff} d set change = 'reappeared'
     where change = 'added' and exists (
       select 1 from refdata.entries h where ${targetIs('h')} and h.entry_key = d.entry_key and h.first_snapshot_id is distinct from $4::bigint)`,
    [...targetParams(target), opened ?? null],
  );
}

export async function countChanges(tx: Queryable, diff: string): Promise<Array<{ change: ChangeKind; n: number }>> {
  const { rows } = await tx.query<{ change: ChangeKind; n: number }>(`select change, count(*)::int as n from ${diff} group by change`);
  return rows;
}

/** Closes the removed and the old side of the modified and reshaped rows at `now`. */
export async function closeRows(tx: Queryable, diff: string, now: Date, lastSnapshotId: number): Promise<void> {
  await tx.query(
    // By row id: right after a large load the table's statistics are stale, and a join on the
    // key made Postgres compare every row with the whole diff (21 s for 1% of 100,000). And as an
    // array, not a join: joined, the planner hashed the diff and read the whole entries table, every
    // list's history with it (0.25 s of a million-row table to close 10,000 rows); the array is
    // looked up in the primary key, in id order, which is no slower even when every row is closed.
    `update refdata.entries e set valid_to = $1, last_snapshot_id = $2
     where e.id = any (array(select old_id from ${diff} where change in ('removed', 'modified', 'reshaped')))`,
    [now, lastSnapshotId],
  );
}

/**
 * The new side of the diff (everything but the removed) as rows to open; with `batch`, only the rows
 * one spill of a streamed resync wrote into it (its parameter is $6, after insertEntries' five).
 */
export function openedBy(diff: string, batch?: number): Pick<RowSource, 'from' | 'params'> {
  return {
    from: `(select entry_key, new_code as code, new_description as description, new_payload as payload, new_hash as entry_hash
            from ${diff} where change <> 'removed'${batch === undefined ? '' : ' and batch = $6'}) n`,
    params: batch === undefined ? [] : [batch],
  };
}

/** One change row per diff row, with the top-level fields a modification (or a reshape) touched. */
export async function insertChanges(tx: Queryable, diff: string, target: Target, snapshotId: number, now: Date): Promise<void> {
  await tx.query(
    `insert into refdata.entry_changes
       (snapshot_id, environment, list_key, variant, entry_key, code, change, before, after, changed_fields, detected_at)
     select $4, $1, $2, $3, entry_key, coalesce(new_code, old_code), change, old_payload, new_payload, changed_fields, $5
     from ${diff}`,
    [...targetParams(target), snapshotId, now],
  );
}

/** The first `cap` entries by key of each kind of change: the sample a digest alert lists. */
export async function changeSample(
  tx: Queryable,
  diff: string,
  kinds: ChangeKind[],
  cap: number,
): Promise<Array<{ change: ChangeKind; entry_key: string; code: string | null; description: string | null }>> {
  const { rows } = await tx.query<{ change: ChangeKind; entry_key: string; code: string | null; description: string | null }>(
    `select change, entry_key, code, description from (
       select change, entry_key, coalesce(new_code, old_code) as code, coalesce(new_description, old_description) as description,
              row_number() over (partition by change order by entry_key) as rn
       from ${diff} where change = any($1::text[])) x
     where rn <= $2 order by change, entry_key`,
    [kinds, cap],
  );
  return rows;
}

/**
 * The entries of the diff's new side (added or changed) holding values that do not fit their
 * column, `nonconforming` being nonconformingExpression over new_payload: the first `cap` by key,
 * each with the number of such values in the whole diff.
 */
export async function nonconformingSample(
  tx: Queryable,
  diff: string,
  nonconforming: string,
  cap: number,
): Promise<Array<{ entry_key: string; code: string | null; nonconforming: Record<string, unknown>; total_values: number }>> {
  const { rows } = await tx.query<{ entry_key: string; code: string | null; nonconforming: Record<string, unknown>; total_values: number }>(
    `select entry_key, code, nonconforming,
            (sum((select count(*) from jsonb_object_keys(nonconforming))) over ())::int as total_values
     from (select entry_key, new_code as code, ${nonconforming} as nonconforming from ${diff} where change <> 'removed') x
     where nonconforming is not null
     order by entry_key limit $1`,
    [cap],
  );
  return rows;
}

/** The last ok snapshot that changed the rows of the target `where` names: the state its current rows are in (null when none). */
export const generationOf = (where: string): string => `select max(id) from refdata.snapshots where ${where} and status = 'ok' and changed`;

/** The last ok snapshot that changed the target's rows: the state its current rows are in (0 when none). */
export async function rowsGeneration(q: Queryable, target: Target): Promise<number> {
  const { rows } = await q.query<{ g: string | null }>(`select (${generationOf(targetIs())}) as g`, targetParams(target));
  return Number(rows[0]?.g ?? 0);
}

/**
 * What a new session's first loads need of the catalog, read while the fetches wait (warmConnections):
 * the tables their statements write and read, and their indexes, which a session's first statement
 * on each loads. It reads no row.
 */
export const warmFirstLoadSession = `select
   (select 1 from refdata.entries where environment = '' and list_key = '' and variant = '' and valid_to is null limit 1),
   (select 1 from refdata.snapshots where id = 0),
   (select 1 from refdata.target_last_ok where environment = '' and list_key = '' and variant = ''),
   (select 1 from refdata.list_columns where list_key = '' and replaced_at is null limit 1),
   (select 1 from refdata.list_views_waiting where list_key = '')`;

/**
 * The statement that opens a transaction of first loads applied together (src/sync/batch/apply-batch.ts#FirstLoadsTogether):
 * each target's lock taken if it is free right now, never waited for (a taken one is another sync's,
 * and its list is synced again the ordinary way). Values quoted in its text, for the BEGIN's round
 * trip; one row per target, with whether its lock was free.
 */
export function tryLockTargetsStatement(environment: string, targets: readonly Target[]): string {
  const lists = JSON.stringify(targets.map((t) => ({ list_key: t.list.key, variant: t.variant })));
  return `select l.list_key, l.variant, pg_try_advisory_xact_lock(refdata.target_lock_key(${pg.escapeLiteral(environment)}, l.list_key, l.variant)) as locked
          from jsonb_to_recordset(${pg.escapeLiteral(lists)}::jsonb) as l(list_key text, variant text)`;
}

/** A locked target's state as first loads applied together read it (firstLoadStates). */
export interface FirstLoadState {
  listKey: string;
  variant: string;
  /** No ok snapshot and no current rows (target-state.ts#isFirstLoad). */
  firstLoad: boolean;
  /** Its snapshot's id, reserved: the list's columns record it before the snapshot row is written. */
  snapshotId: number;
}

/**
 * Whether each of the locked targets is still a first load, read in a statement after the locks
 * (as lock_target_state reads after its lock), with the clock of them all and a snapshot id each.
 */
export async function firstLoadStates(q: Queryable, environment: string, targets: readonly Target[]): Promise<{ now: Date; states: FirstLoadState[] }> {
  const { rows } = await q.query<{ now: Date; list_key: string; variant: string; first_load: boolean; snapshot_id: string }>(
    `select c.now, l.list_key, l.variant,
            not exists (select 1 from refdata.target_last_ok o where o.environment = $1 and o.list_key = l.list_key and o.variant = l.variant)
            and not exists (select 1 from refdata.entries e
                            where e.environment = $1 and e.list_key = l.list_key and e.variant = l.variant and e.valid_to is null) as first_load,
            ${nextSnapshotId} as snapshot_id
     from (select clock_timestamp() as now) c cross join unnest($2::text[], $3::text[]) as l(list_key, variant)`,
    [environment, targets.map((t) => t.list.key), targets.map((t) => t.variant)],
  );
  return {
    now: rows[0]?.now ?? new Date(),
    states: rows.map((r) => ({ listKey: r.list_key, variant: r.variant, firstLoad: r.first_load, snapshotId: Number(r.snapshot_id) })),
  };
}

/**
 * Opens the rows of several targets of one environment, current from `now`, each under its target's
 * snapshot: one unnest whose rows carry their list, variant and snapshot beside their own columns.
 */
export async function insertEntriesOfTargets(
  tx: Queryable,
  environment: string,
  now: Date,
  lists: ReadonlyArray<{ target: Target; snapshotId: number; rows: readonly NormalizedEntry[] }>,
): Promise<void> {
  const each = <T>(value: (list: (typeof lists)[number], row: NormalizedEntry) => T): T[] => lists.flatMap((l) => l.rows.map((r) => value(l, r)));
  const payloads = payloadsParam(
    each((_, r) => r.payload),
    '$9',
  );
  await tx.query(
    `insert into refdata.entries
       (environment, list_key, variant, ${ENTRY_ROW_COLUMNS}, valid_from, first_snapshot_id, last_snapshot_id)
     select $1, list_key, variant, ${ENTRY_ROW_COLUMNS}, $2, snapshot_id, snapshot_id
     from rows from (unnest($3::text[]), unnest($4::text[]), unnest($5::bigint[]), unnest($6::text[]), unnest($7::text[]),
                     unnest($8::text[]), ${payloads.call}, unnest($10::text[]))
          as s(list_key, variant, snapshot_id, entry_key, code, description, payload, entry_hash)`,
    [
      environment,
      now,
      each((l) => l.target.list.key),
      each((l) => l.target.variant),
      bigintArrayText(each((l) => l.snapshotId)),
      each((_, r) => r.entryKey),
      each((_, r) => r.code),
      each((_, r) => r.description),
      payloads.value,
      each((_, r) => r.digest),
    ],
  );
}

/**
 * The statement that NOTIFYs refdata_changes once per payload (src/sync/batch/apply-batch.ts), sent when the transaction
 * commits. Its values are quoted in its text, so it can travel in the COMMIT's round trip (atCommit).
 */
export function notifyChangesStatement(payloads: readonly string[]): string {
  return `select pg_notify('refdata_changes', p) from unnest(array[${payloads.map((p) => pg.escapeLiteral(p)).join(', ')}]::text[]) as p`;
}

/** Names in a snapshot's error what its views wait for. */
export const setSnapshotError = 'update refdata.snapshots set error = $2 where id = $1';

// ── Runs ──
// The SQL on refdata.sync_runs, by name: opening, counting and closing runs, and finding the ones
// left running (docs/architecture.md, "Where SQL lives").

/** The running run of a source's slot. */
export const runningRunOfSlot = "select id from refdata.sync_runs where source = $1 and slot = $2 and status = 'running'";

/** The runs the queue started that still run. */
export const runningQueuedRuns = `select id, source, slot from refdata.sync_runs
     where status = 'running' and trigger <> 'cli' and slot is not null
       and started_at < clock_timestamp() - make_interval(secs => $1::float8 / 1000)
     order by id limit 200`;

/** A run's status. */
export const runStatus = 'select status from refdata.sync_runs where id = $1';

/** Reads no row: fails unless refdata.sync_runs exists and this login may read it (the schema is migrated). */
export const runsReadable = 'select 1 from refdata.sync_runs limit 0';

/** Opens a run, unless one of the same source and slot exists. */
export const insertRun = `insert into refdata.sync_runs (environment, source, trigger, status, slot, targets_total, started_at)
     values ($1, $2, $3, 'running', $4, $5, clock_timestamp())
     on conflict (source, slot) do nothing
     returning id`;

/** The run of a source's slot. */
export const runOfSlot = 'select id from refdata.sync_runs where source = $1 and slot = $2';

/** Counts a run going on in one statement (refdata.advance_run, migration 0011). */
export const advanceRun = 'select refdata.advance_run($1) as advanced';

/**
 * A run's progress from its snapshots, its row locked (refdata.run_progress): `progress` (the run's
 * status before), `total`, `done` and `failed`. While none of its targets failed, the same statement
 * brings the run up to date with that count (updateRunProgress with no error), closing it once every
 * target has a snapshot, and returns it as its outcome (RunCompleted's columns, null when not
 * updated): a run's close then takes the BEGIN's round trip and the COMMIT's, no third between them.
 */
export const countAndUpdateRun = (runId: number): string => {
  const id = sqlInteger(runId);
  return `with p as (select * from refdata.run_progress(${id})),
     r as (update refdata.sync_runs u set ${runProgressSet('p.done', 'p.failed', 'null')}
           from p where u.id = ${id} and p.status = 'running' and p.failed = 0 returning u.*)
     select p.status as progress, p.targets_total as total, p.done, p.failed, c.*
       from p left join lateral (select ${runCompletedColumns} from r) c on true`;
};

/** The run's lists that did not sync ($1: the run): the latest snapshot of each list with no ok one (run-error.ts). */
export const runProblemsQuery = `select distinct on (s.list_key, s.variant) s.list_key, s.variant, s.status, s.error, s.error_code
     from refdata.snapshots s
     where s.run_id = $1 and s.status <> 'ok'
       and not exists (select 1 from refdata.snapshots o
                       where o.run_id = $1 and o.list_key = s.list_key and o.variant = s.variant and o.status = 'ok')
     order by s.list_key, s.variant, s.id desc`;

/** The SET of a run's progress (`u`: its row), and of its outcome once every target has one. */
const runProgressSet = (done: string, failed: string, error: string): string => `targets_done = ${done},
           targets_failed = ${failed},
           status = case when ${done} < u.targets_total then 'running'
                         when ${failed} = 0 then 'succeeded'
                         when ${failed} >= u.targets_total then 'failed'
                         else 'partial' end,
           finished_at = case when ${done} >= u.targets_total then clock_timestamp() end,
           error = ${error}`;

/** Sets a run's progress, and its outcome once every target has one. */
export const updateRunProgress = `update refdata.sync_runs u set ${runProgressSet('$2', '$3', '$4')} where u.id = $1`;

/** Fails a run still running. */
export const failRunningRun = `update refdata.sync_runs u set status = 'failed', finished_at = clock_timestamp(), error = $2 where u.id = $1 and u.status = 'running'`;

/** A source's in-process runs still marked running. */
export const runningCliRuns = "select id from refdata.sync_runs where source = $1 and status = 'running' and trigger = 'cli'";

/** An updated run `r` as its outcome (RunCompleted), with each target's last snapshot in it. */
const runCompletedColumns = `r.id::int as run_id, r.source, r.environment, r.trigger, r.slot, r.status,
            to_json(r.started_at) #>> '{}' as started_at, to_json(r.finished_at) #>> '{}' as finished_at,
            r.targets_total, r.targets_done, r.targets_failed, r.error,
            coalesce((select json_agg(json_build_object(
                       'list_key', s.list_key, 'variant', s.variant,
                       'status', case when s.status = 'ok' then case when s.changed then 'changed' else 'unchanged' end else s.status end,
                       'snapshot_id', s.id, 'entries', s.entry_count, 'added', s.added, 'removed', s.removed,
                       'modified', s.modified, 'reappeared', s.reappeared, 'reshaped', s.reshaped, 'error_code', s.error_code)
                       order by s.list_key, s.variant)
                      from (select distinct on (list_key, variant) * from refdata.snapshots
                             where run_id = r.id order by list_key, variant, id desc) s), '[]') as lists`;

/**
 * A statement that updates one run (`update`: an UPDATE of refdata.sync_runs as `u`, without
 * RETURNING) and returns it as its outcome (RunCompleted): one round trip. No row when the update
 * changed none.
 */
export function updatedRunCompleted(update: string): string {
  return `with r as (${update} returning u.*)
     select ${runCompletedColumns}
       from r`;
}

/**
 * The run_completed alert of a run (written once: a second of the same run writes nothing) and the
 * NOTIFY that wakes the dispatcher. Without parameters, to go with the COMMIT: each argument is
 * already a SQL literal (`runId` an integer, `environment` and `payload` escaped).
 */
export const runCompletedAlert = (runId: string, environment: string, payload: string): string =>
  `with inserted as (
       insert into refdata.alerts (run_id, kind, environment, list_key, variant, payload)
       values (${runId}, 'run_completed', ${environment}, '', '', ${payload}::jsonb)
       on conflict (run_id, kind) where run_id is not null do nothing
       returning id)
     select pg_notify('${ALERT_CHANNEL}', json_build_object('id', id, 'environment', ${environment}::text, 'kind', 'run_completed')::text) from inserted`;

// ── A row as text, for COPY and inserts ──

/*
 * The two forms rows take to Postgres, shared by both loaders: COPY's text format for large
 * batches, and one unnest over array parameters for the rest (and for PGlite, which takes no COPY).
 */

const COPY_CHUNK_CHARS = 256 * 1024;
const copySpecial = /[\\\n\r\t]/;

/** A value in COPY's text format: backslash, newline, carriage return and tab escaped; null is \N. */
export function copyText(value: string | null): string {
  if (value === null) return '\\N';
  if (!copySpecial.test(value)) return value;
  return value.replace(/[\\\n\r\t]/g, (c) => (c === '\\' ? '\\\\' : c === '\n' ? '\\n' : c === '\r' ? '\\r' : '\\t'));
}

/** Rows in COPY's text format, in chunks; `prefix` (already in COPY text) starts every line. */
export function* copyChunks(rows: readonly NormalizedEntry[], prefix = ''): Generator<string> {
  let chunk = '';
  for (const r of rows) {
    chunk += `${prefix}${copyText(r.entryKey)}\t${copyText(r.code)}\t${copyText(r.description)}\t${copyText(r.payload)}\t${copyText(r.digest)}\n`;
    if (chunk.length >= COPY_CHUNK_CHARS) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk) yield chunk;
}

/** Rows to read in SQL: a relation with the columns ENTRY_ROW_COLUMNS. */
export interface RowSource {
  from: string;
  params: unknown[];
  /** Rows in it, identical duplicates included. */
  rows: number;
}

/**
 * Past this many characters of payloads the payloads go as a jsonb[] array, not as one jsonb
 * document: a jsonb value holds at most 256 MB, and 32 million characters of JSON text stay well
 * under it in any encoding. Held first loads and spills are far smaller.
 */
const PAYLOADS_IN_ONE_DOCUMENT_CHARS = 32 * 1024 * 1024;

/**
 * The rows' payloads as one parameter, and the set-returning call (for ROWS FROM, beside the other
 * columns' unnest) that yields them back in order as jsonb. Each payload is already JSON text, so
 * they go as one JSON array joined by commas: as a text[] array, node-postgres escaped every quote
 * and backslash of every payload and Postgres undid it before parsing each one (on 663 sandbox
 * entries, 0.9 ms of the client and about 1 ms more of Postgres per statement than the document's
 * 0.45 ms: docs/performance.md, P4).
 */
export function payloadsParam(
  payloads: readonly string[],
  param: string,
  documentChars = PAYLOADS_IN_ONE_DOCUMENT_CHARS,
): { call: string; value: string | readonly string[] } {
  let chars = payloads.length + 2;
  for (const p of payloads) chars += p.length;
  if (chars > documentChars) return { call: `unnest(${param}::jsonb[])`, value: payloads };
  return { call: `jsonb_array_elements(${param}::jsonb)`, value: `[${payloads.join(',')}]` };
}

/** Rows held in memory as one ROWS FROM over five parameters (four text arrays and the payloads), numbered from `first`. */
export function unnestRows(rows: readonly NormalizedEntry[], first: number): RowSource {
  const $ = (i: number) => `$${first + i}`;
  const payloads = payloadsParam(
    rows.map((r) => r.payload),
    $(3),
  );
  return {
    from: `rows from (unnest(${$(0)}::text[]), unnest(${$(1)}::text[]), unnest(${$(2)}::text[]), ${payloads.call}, unnest(${$(4)}::text[])) as s(entry_key, code, description, payload, entry_hash)`,
    params: [rows.map((r) => r.entryKey), rows.map((r) => r.code), rows.map((r) => r.description), payloads.value, rows.map((r) => r.digest)],
    rows: rows.length,
  };
}

/** The COPY text in front of each of a target's rows written by copyEntries: its target, its time and its snapshot, twice. */
export function entryCopyPrefix(target: Target, now: Date, snapshotId: number): string {
  return [target.source.environment, target.list.key, target.variant, now.toISOString(), snapshotId, snapshotId].map((v) => copyText(String(v))).join('\t');
}
