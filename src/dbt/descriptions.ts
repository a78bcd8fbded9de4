// What data teams read about schema refdata: the relations they query, their columns, and the words
// of the COMMENTs on them. The per-list views are created from these descriptions plus the recorded
// typed columns (src/columns/list-views.ts); test/reader/dbt.test.ts holds the rest against the live
// database, so a column added, renamed or re-described in a migration has to be described here too.
import { getListDefinition } from '../catalog/catalog.ts';
import { listKeys, type ListKey } from '../catalog/list-keys.ts';
import { foldFieldName } from '../columns/column-name.ts';
import { sqlType } from '../columns/column-type.ts';
import type { TypedColumn } from '../columns/typed-column.ts';

export interface ColumnDescription {
  name: string;
  description: string;
  /** The Postgres type, given for the typed columns (dbt's data_type). */
  dataType?: string;
}

export interface RelationDescription {
  name: string;
  kind: 'view' | 'table';
  description: string;
  columns: ColumnDescription[];
  /** The columns that identify a row: unique together, none null. */
  key: string[];
  /**
   * For a list whose entries are keyed by several fields (nmfc_codes: item and sub), the typed
   * columns of those fields with the environment and variant: the key a join should use.
   */
  fieldKey?: string[];
}

const listViewDescriptions: Record<ListKey, string> = {
  accessorials: 'Current pickup and delivery accessorials.',
  appointment_types: 'Current pickup and delivery appointment types.',
  charge_codes: 'Current charge codes of the versioned charge-code standard, one set per kept version.',
  charge_line_item_categories: 'Current charge line item categories.',
  document_types: 'Current supported document types.',
  equipment_types: 'Current equipment (trailer/container) types.',
  hazmat: 'Current hazardous material classes and divisions.',
  location_types: 'Current location type codes.',
  nmfc_codes: 'Current National Motor Freight Classification items.',
  package_types: 'Current package types of the platform.',
  carrier_package_types: 'Current package types of each carrier.',
  piece_types: 'Current piece types.',
  vendor_poc_roles: 'Current vendor point-of-contact roles and job titles.',
  service_levels: 'Current service levels.',
  shipment_modes: 'Current shipment modes (LTL, FTL, PARCEL, ...).',
  shipment_rep_roles: 'Current shipment representative roles.',
  stop_status_reason_codes: 'Current stop status reason codes.',
  shipment_statuses: 'Current shipment statuses (states).',
};

/** The variant column of a list view: named after what the variant is for that list. */
export function variantColumn(key: ListKey): ColumnDescription {
  if (key === 'charge_codes') {
    return { name: 'version', description: 'Charge-code version: a date sent as X-Service-Version, or unpinned (the account setting, else the latest).' };
  }
  if (key === 'carrier_package_types') {
    return { name: 'carrier', description: 'Carrier the package types belong to (fedex, ups, usps, dhl, ...).' };
  }
  return { name: 'variant', description: "Always '' for this list." };
}

const environment = 'Environment label of the source (sandbox, production, ...).';
const currentColumns = {
  entry_key: "The entry's identity within its list.",
  code: "The entry's code as other APIs reference it.",
  description: 'Human-readable description.',
  payload: 'The whole entry as served, unknown fields included.',
  valid_from: 'Since when this version of the entry has been current.',
};
const currentTail = (): ColumnDescription[] => Object.entries(currentColumns).map(([name, description]) => ({ name, description }));
const nonconforming: ColumnDescription = {
  name: 'nonconforming',
  description:
    "The entry's values that do not fit their typed column's type, as an object of column name to value as served (NULL in the typed column, kept in payload); null when every value fits.",
};

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

/** A typed column's comment: the field as served, its inferred type, and since when it is there. */
export function typedColumnDescription(c: TypedColumn): string {
  const type = c.type === 'null' ? 'text (only nulls served so far)' : c.type;
  const since = c.since.toISOString().slice(0, 10);
  const origin = c.sinceSnapshot === null ? 'inferred from the stored history' : `snapshot ${c.sinceSnapshot}`;
  return `Field ${JSON.stringify(c.field)} as served, typed ${type} (inferred from its values); since ${since} (${origin}).`;
}

function typedColumns(typed: readonly TypedColumn[]): ColumnDescription[] {
  return typed.map((c) => ({ name: c.column, description: typedColumnDescription(c), dataType: sqlType(c.type) }));
}

/**
 * The typed columns of a list's key fields, when they are several (entry_key joins them with '|').
 * A key field is always served, so its column exists once the list was synced; its name follows
 * the naming rule for a field seen first (src/columns/column-name.ts).
 */
function fieldKeyColumns(key: ListKey, contractColumns: readonly string[], typed: readonly TypedColumn[]): string[] | undefined {
  const { keyFields } = getListDefinition(key);
  if (keyFields.length < 2) return undefined;
  return keyFields.map((field) => {
    const recorded = typed.find((c) => c.field === field)?.column;
    const folded = foldFieldName(field);
    return recorded ?? (contractColumns.includes(folded) ? `${folded}_field` : folded);
  });
}

/** The current entries of one list (refdata.<list>): the contract's columns first, then one per field. */
export function listView(key: ListKey, typed: readonly TypedColumn[] = []): RelationDescription {
  const variant = variantColumn(key);
  const contract = [{ name: 'environment', description: environment }, variant, ...currentTail(), nonconforming];
  const columns = [...contract, ...typedColumns(typed)];
  const fields = fieldKeyColumns(
    key,
    contract.map((c) => c.name),
    typed,
  );
  return {
    name: key,
    kind: 'view',
    description: listViewDescriptions[key],
    columns,
    key: ['environment', variant.name, 'entry_key'],
    ...(fields ? { fieldKey: ['environment', variant.name, ...fields] } : {}),
  };
}

/** Every version of the entries of one list (refdata.<list>_history), typed like the current view. */
export function listHistoryView(key: ListKey, typed: readonly TypedColumn[] = []): RelationDescription {
  const variant = variantColumn(key);
  return {
    name: `${key}_history`,
    kind: 'view',
    description: `Every version of every entry of ${key}, with the typed columns of refdata.${key}: valid from valid_from until valid_to (null while current). As of time t: valid_from <= t and (valid_to is null or valid_to > t).`,
    columns: [
      { name: 'environment', description: environment },
      variant,
      ...currentTail().map((c) => (c.name === 'valid_from' ? { name: 'valid_from', description: 'When this version of the entry became current.' } : c)),
      { name: 'valid_to', description: 'When this version stopped being current; null while it is current.' },
      nonconforming,
      ...typedColumns(typed),
    ],
    key: ['environment', variant.name, 'entry_key', 'valid_from'],
  };
}

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
      description: 'Machine-readable kind of failure (auth, tls, http_status, protocol, timeout, size, paging, network, duplicate_key, held).',
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
