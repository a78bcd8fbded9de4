// What data teams read about schema refdata: the relations they query, their columns, and the words
// of the COMMENTs on them. The per-list views' own descriptions live beside the code that creates
// them (src/columns/typed-columns.ts); test/reader/dbt.test.ts holds the rest against the live
// database, so a column added, renamed or re-described in a migration has to be described here too.
import { listKeys, type ListKey } from '../catalog/list-keys.ts';
import { errorCodeDescription } from '../util/error-codes.ts';
import { type TypedColumn, currentTail, environment, listHistoryView, listView, type RelationDescription } from '../columns/typed-columns.ts';

const currentEntries: RelationDescription = {
  name: 'current_entries',
  kind: 'view',
  description: 'Every entry that exists now, across all lists, variants and environments.',
  columns: [
    { name: 'environment', description: environment },
    { name: 'list_key', description: 'Which reference list.' },
    { name: 'variant', description: "'' for plain lists; the carrier for carrier_package_types; the version for charge_codes." },
    ...currentTail(),
  ],
  key: ['environment', 'list_key', 'variant', 'entry_key'],
};

const entries: RelationDescription = {
  name: 'entries',
  kind: 'table',
  description: 'Full history of every entry (slowly changing dimension, type 2): one row per version of an entry, valid from valid_from until valid_to.',
  columns: [
    { name: 'id', description: 'Row id.' },
    { name: 'environment', description: 'Environment label of the source.' },
    { name: 'list_key', description: 'Which reference list.' },
    { name: 'variant', description: "'' for plain lists; carrier or charge-code version otherwise." },
    { name: 'entry_key', description: "The entry's identity within its list (its code; item|sub for NMFC; machine_readable for equipment types)." },
    { name: 'code', description: "The entry's code as other APIs reference it." },
    { name: 'description', description: 'Human-readable description of the entry.' },
    { name: 'payload', description: 'The whole entry exactly as the service served it, unknown fields included.' },
    { name: 'entry_hash', description: 'sha-256 (base64) of the canonical entry, for change detection.' },
    { name: 'valid_from', description: 'When this version of the entry was first seen (database clock).' },
    { name: 'valid_to', description: 'When this version stopped being current; null while it is current.' },
    { name: 'first_snapshot_id', description: 'Snapshot that introduced this version.' },
    {
      name: 'last_snapshot_id',
      description: 'Last snapshot known to contain this version; set when the version is closed (unchanged fetches do not touch rows).',
    },
  ],
  key: ['id'],
};

const entryChanges: RelationDescription = {
  name: 'entry_changes',
  kind: 'table',
  description: 'Every detected change of an entry, newest last: added, removed, modified, reappeared or reshaped, with the entry before and after.',
  columns: [
    { name: 'id', description: 'Change id, taken when the row is written. Not a cursor: ids commit out of order; read refdata.change_feed.' },
    { name: 'snapshot_id', description: 'Snapshot in which the change was detected.' },
    { name: 'environment', description: 'Environment label of the source.' },
    { name: 'list_key', description: 'Which reference list.' },
    { name: 'variant', description: "'' for plain lists; carrier or charge-code version otherwise." },
    { name: 'entry_key', description: "The entry's identity within its list." },
    { name: 'code', description: "The entry's code." },
    {
      name: 'change',
      description:
        'added, removed, modified (a field present before and after changed value), reappeared (a key that came back after removal) or reshaped (only fields that appeared in or left the whole list in that snapshot differ).',
    },
    { name: 'before', description: 'The entry before the change (null when added).' },
    { name: 'after', description: 'The entry after the change (null when removed).' },
    { name: 'changed_fields', description: 'For modified and reshaped entries, the top-level fields whose values changed (or appeared, or left).' },
    {
      name: 'detected_at',
      description:
        'When the sync that recorded the change began its transaction (database clock). Not a cursor: a longer sync commits changes dated before ones already readable; read refdata.change_feed.',
    },
    {
      name: 'impact',
      description:
        'For a removed or modified code that facts use: one element per usage column, {column, rows, from, to, top} (facts in use with the code, their time range, the top values of groupBy). Null when no usage column uses the code.',
    },
    {
      name: 'txid',
      description:
        'The transaction that wrote the change (0 for changes recorded before refsync 0.3): with id, the order of refdata.change_feed. Not a cursor on its own: read the feed.',
    },
    {
      name: 'feed_epoch',
      description:
        'The change feed epoch the change was written in (refdata.change_feed_epochs): 0 until the database is first restored. With txid and id, the order of refdata.change_feed.',
    },
  ],
  key: ['id'],
};

const snapshots: RelationDescription = {
  name: 'snapshots',
  kind: 'table',
  description: 'One row per fetch of one list variant: its outcome, content hash and what changed against the previous good fetch.',
  columns: [
    { name: 'id', description: 'Snapshot id.' },
    { name: 'run_id', description: 'The sync run this fetch belonged to.' },
    { name: 'environment', description: 'Environment label of the source.' },
    { name: 'list_key', description: 'Which reference list (accessorials, charge_codes, ...).' },
    { name: 'variant', description: "'' for plain lists; the carrier for carrier_package_types; the version for charge_codes (a date or unpinned)." },
    { name: 'fetched_at', description: 'When the fetch was recorded (database clock).' },
    {
      name: 'status',
      description:
        'ok (applied or unchanged), failed (the list could not be fetched or was invalid; data untouched), unavailable (the service does not offer it), held (would remove too much; not applied).',
    },
    { name: 'content_hash', description: 'sha-256 hex of the canonical list; equal hashes mean identical lists.' },
    { name: 'entry_count', description: 'Number of distinct entries fetched.' },
    { name: 'changed', description: 'True when the list differs from the previous ok snapshot and was applied.' },
    { name: 'added', description: 'Entries new in this snapshot.' },
    { name: 'removed', description: 'Entries gone in this snapshot.' },
    { name: 'modified', description: 'Entries whose content changed.' },
    { name: 'reappeared', description: 'Entries that came back after having been removed.' },
    { name: 'error', description: 'Why the fetch failed or was held, in one line.' },
    {
      name: 'error_code',
      description: errorCodeDescription(),
    },
    { name: 'fields', description: 'Field names the entries carried, to detect schema changes.' },
    { name: 'pages', description: 'Pages fetched.' },
    { name: 'duration_ms', description: 'Time the fetch and apply took, in milliseconds.' },
    {
      name: 'replaced_values',
      description: 'Strings (values and object keys, at any depth) in which NUL or lone surrogates, which Postgres cannot store, were replaced by U+FFFD.',
    },
    {
      name: 'impact_error',
      description:
        "Why the impact of this snapshot's changes on a usage column could not be computed (missing table, no privilege, ...); the snapshot itself was applied.",
    },
    {
      name: 'nonconforming',
      description:
        "Values of the fetch that did not fit the type of their typed column: NULL in that column, kept in payload, listed in the view's nonconforming column.",
    },
    {
      name: 'reshaped',
      description:
        'Entries that differ from their previous version only by fields that appeared in or left the list in this snapshot (not counted in modified).',
    },
    {
      name: 'schema_accepted',
      description:
        "Whether this snapshot applied a change of the list's columns that its schema policy (REFSYNC_SCHEMA_CHANGES) holds, accepted with --accept-schema.",
    },
    {
      name: 'served_digest',
      description:
        "sha-256 (hex) of the entries as served, seeded with the refsync release and the list's key rules: an unchanged sync that finds it again skips normalising the list. Null for large lists and failed fetches.",
    },
  ],
  key: ['id'],
};

const syncRuns: RelationDescription = {
  name: 'sync_runs',
  kind: 'table',
  description: 'One row per sync run: when it started and ended, what triggered it, and how it went.',
  columns: [
    { name: 'id', description: 'Run id.' },
    { name: 'environment', description: 'Environment label of the source the run synced (sandbox, production, ...).' },
    { name: 'trigger', description: 'What started the run: schedule, manual (refsync trigger) or cli (refsync sync).' },
    { name: 'status', description: 'running, succeeded (every list synced), partial (some lists failed or were held) or failed.' },
    { name: 'started_at', description: 'When the run started (database clock).' },
    { name: 'finished_at', description: 'When the run ended; null while running.' },
    { name: 'error', description: 'Why the run failed or was partial, in one line.' },
    { name: 'source', description: 'Name of the configured source the run was for.' },
    { name: 'slot', description: 'Schedule slot or trigger id; one run record per slot.' },
    { name: 'targets_total', description: 'How many list variants the run covers.' },
    { name: 'targets_done', description: 'How many of them have finished (any outcome).' },
    { name: 'targets_failed', description: 'How many of them failed, were held or were unavailable.' },
  ],
  key: ['id'],
};

export const listSyncTimes: RelationDescription = {
  name: 'list_sync_times',
  kind: 'view',
  description:
    'When each list variant was first and last synced successfully (unchanged fetches included): the loaded_at of freshness checks, and where the recorded history of a list begins.',
  columns: [
    { name: 'environment', description: 'Environment label of the source.' },
    { name: 'list_key', description: 'Which reference list.' },
    { name: 'variant', description: "'' for plain lists; the carrier for carrier_package_types; the version for charge_codes." },
    { name: 'first_synced_at', description: 'The first successful sync: before it, refsync recorded nothing of this list variant.' },
    { name: 'last_synced_at', description: 'The last successful sync, changed or not.' },
    { name: 'entry_count', description: 'Entries in the last successful sync.' },
  ],
  key: ['environment', 'list_key', 'variant'],
};

/**
 * The relations data teams query, in the order a reader meets them: the current views, the typed
 * history per list, the history and the change log, then the runs and snapshots behind them and
 * each list's sync times. The alert outbox is left out. `typed` holds the recorded typed columns
 * of each list.
 */
export function readerRelations(typed: ReadonlyMap<ListKey, readonly TypedColumn[]> = new Map()): RelationDescription[] {
  return [
    currentEntries,
    ...listKeys.map((k) => listView(k, typed.get(k))),
    ...listKeys.map((k) => listHistoryView(k, typed.get(k))),
    entries,
    entryChanges,
    snapshots,
    syncRuns,
    listSyncTimes,
  ];
}

/** The values entry_changes.change takes (docs/contract.md). */
export const changeKinds = ['added', 'removed', 'modified', 'reappeared', 'reshaped'] as const;
