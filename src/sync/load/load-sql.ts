// The loaders' SQL apart from the rows themselves (src/sync/sql.ts): the session tables a load
// stages into and diffs in, the current-row index's COPY, the statistics of refdata.entries, and the
// lists set aside as unchanged, by name (docs/architecture.md, "Where SQL lives").
import type { Target } from '../../catalog/catalog.ts';
import { changedFieldsOf, ENTRY_ROW_COLUMNS, generationOf, targetIsQuoted } from '../sql.ts';

/** Postgres's estimate of refdata.entries' row count. */
export const entriesRowEstimate = `select reltuples::float8 as rows from pg_class where oid = 'refdata.entries'::regclass`;

/** The last ok snapshot of each target of an environment ($1) with a hash and a count: what a run compares its small lists with. */
export const lastOkOfSource = `select t.list_key, t.variant, t.entry_count, s.content_hash, s.fields, s.served_digest, s.replaced_values
     from refdata.target_last_ok t join refdata.snapshots s on s.id = t.snapshot_id
     where t.environment = $1 and t.entry_count is not null and s.content_hash is not null`;

/** A staging table of entries, dropped at commit when made in a transaction. */
export const createStagingTable = (table: string, dropOnCommit: boolean): string =>
  `create temp table ${table} (entry_key text not null, code text, description text, payload jsonb not null, entry_hash text not null)${dropOnCommit ? ' on commit drop' : ''}`;

/** Entries unnested from arrays into a staging table. */
export const insertStaged = (table: string, rows: string): string => `insert into ${table} (${ENTRY_ROW_COLUMNS}) select * from ${rows}`;

/** COPY of entries into a staging table. */
export const copyIntoStaging = (table: string): string => `copy ${table} (${ENTRY_ROW_COLUMNS}) from stdin`;

/** Drops a session table (staging, diff) made outside a transaction. */
export const dropSessionTable = (table: string): string => `drop table if exists ${table}`;

/** A streamed resync's diff table, dropped at commit. */
export const createStreamedDiff = (diff: string): string =>
  `create temp table ${diff} (entry_key text not null, change text not null, new_code text, new_description text, new_payload jsonb,
         new_hash text, old_id bigint, old_code text, old_description text, old_payload jsonb, changed_fields text[], batch integer not null) on commit drop`;

/** The diff's index by spill: each spill opens the versions of its own rows. */
export const indexDiffByBatch = (diff: string): string => `create index on ${diff} (batch)`;

/** One spill's entries not current as fetched into the diff, with the current version of each key, closed in the same statement. */
export const diffAndCloseSpill = (diff: string, rows: string): string =>
  `with d as (
         insert into ${diff} (entry_key, change, new_code, new_description, new_payload, new_hash, old_id, old_code, old_description, old_payload, changed_fields, batch)
         select f.entry_key, case when c.id is null then 'added' else 'modified' end, f.code, f.description, f.payload, f.entry_hash,
                c.id, c.code, c.description, c.payload, case when c.id is not null then ${changedFieldsOf('c.payload', 'f.payload')} end, $6
         from (select distinct on (entry_key) * from ${rows} order by entry_key) f
         left join lateral (select id, code, description, payload, entry_hash from refdata.entries
                            where environment = $1 and list_key = $2 and variant = $3 and entry_key = f.entry_key and valid_to is null
                            limit 1) c on true
         where c.id is null or c.entry_hash <> f.entry_hash
         returning old_id)
       update refdata.entries e set valid_to = $4, last_snapshot_id = $5
       where e.id = any (array(select old_id from d where old_id is not null))`;

/** Closes the current versions no fetched entry matched (less those a spill closed) and puts them into the diff as removed. */
export const closeRemovedIntoDiff = (diff: string): string =>
  `with gone as (select id from unnest($3::bigint[]) as u(id) except select old_id from ${diff} where old_id is not null),
       r as (
         update refdata.entries e set valid_to = $1, last_snapshot_id = $2
         where e.id = any (array(select id from gone)) and e.valid_to is null
         returning e.id, e.entry_key, e.code, e.description, e.payload)
       insert into ${diff} (entry_key, change, old_id, old_code, old_description, old_payload, batch)
       select entry_key, 'removed', id, code, description, payload, 0 from r`;

/** Analyzes a session table (staging, diff) before a large diff or apply reads it. */
export const analyzeTable = (table: string): string => `analyze ${table}`;

/** Analyzes refdata.entries' planned columns, skipping it if locked. */
export const analyzeEntries = (columns: string): string => `analyze (skip_locked) refdata.entries (${columns})`;

/**
 * Opens the transaction that reads a target's current-row index (large/current-index.ts), in the
 * BEGIN's own round trip: repeatable read, so that the COPY after it reads the rows of the
 * generation read here; and the last ok snapshot's entry count, which sizes the index. Its values are
 * quoted in its text. The read runs while the list is fetched, and each of its round trips waits its
 * turn on the main thread the fetch keeps busy (up to 100 ms at a million entries): with this one
 * and the COPY it takes two.
 */
export function openCurrentIndexRead(target: Target): string {
  const where = targetIsQuoted(target);
  return `set transaction isolation level repeatable read, read only;
          select (${generationOf(where)}) as generation, (select entry_count from refdata.target_last_ok where ${where}) as entry_count`;
}

/** The row openCurrentIndexRead's statement returns: the generation (0 when none) and the entry count (0 when unknown). */
export function currentIndexOpened(row: Record<string, unknown> | undefined): { generation: number; entryCount: number } {
  return { generation: Number(row?.generation ?? 0), entryCount: Number(row?.entry_count ?? 0) };
}

/** The target's current rows' id, key and hash, as COPY TO STDOUT (COPY takes no parameters: the target's names as literals). */
export function copyCurrentIndex(target: Target): string {
  return `copy (select id, entry_key, entry_hash from refdata.entries where ${targetIsQuoted(target)} and valid_to is null) to stdout`;
}
