import { sql } from 'drizzle-orm';
import { bigint, bigserial, boolean, check, customType, index, integer, jsonb, pgSchema, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

/**
 * The `refdata` schema of docs/contract.md. Table and column names are public: downstream SQL depends on
 * them. Columns may be added, never renamed. Views, comments and roles live in custom migrations.
 */
export const refdata = pgSchema('refdata');

const tstz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/** Postgres's 64-bit transaction id (never wraps around), read as its decimal text. */
const xid8 = customType<{ data: string }>({ dataType: () => 'xid8' });

export const syncRuns = refdata.table(
  'sync_runs',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    environment: text('environment').notNull(),
    trigger: text('trigger').notNull(),
    status: text('status').notNull().default('running'),
    startedAt: tstz('started_at').notNull().defaultNow(),
    finishedAt: tstz('finished_at'),
    error: text('error'),
    /** Source name (scheduler id) that the run was made for. */
    source: text('source').notNull().default(''),
    /** The schedule slot or trigger id: one run record per slot. */
    slot: text('slot'),
    targetsTotal: integer('targets_total').notNull().default(0),
    targetsDone: integer('targets_done').notNull().default(0),
    targetsFailed: integer('targets_failed').notNull().default(0),
  },
  (t) => [
    index('sync_runs_environment_started_idx').on(t.environment, t.startedAt),
    index('sync_runs_finished_age_idx').on(t.finishedAt).where(sql`finished_at is not null`),
    uniqueIndex('sync_runs_source_slot_uq').on(t.source, t.slot),
  ],
);

export const snapshots = refdata.table(
  'snapshots',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    runId: bigint('run_id', { mode: 'number' }).references(() => syncRuns.id),
    environment: text('environment').notNull(),
    listKey: text('list_key').notNull(),
    variant: text('variant').notNull().default(''),
    fetchedAt: tstz('fetched_at').notNull().defaultNow(),
    status: text('status').notNull(),
    contentHash: text('content_hash'),
    entryCount: integer('entry_count'),
    changed: boolean('changed').notNull().default(false),
    added: integer('added').notNull().default(0),
    removed: integer('removed').notNull().default(0),
    modified: integer('modified').notNull().default(0),
    reappeared: integer('reappeared').notNull().default(0),
    /** Entries that differ only by fields that appeared in or left the list in this snapshot. */
    reshaped: integer('reshaped').notNull().default(0),
    error: text('error'),
    errorCode: text('error_code'),
    /** Top-level field names seen across the entries, for schema-drift alerts. */
    fields: text('fields').array(),
    pages: integer('pages'),
    durationMs: integer('duration_ms'),
    /** Strings whose NUL or lone surrogates were replaced by U+FFFD (Postgres cannot store them). */
    replacedValues: integer('replaced_values').notNull().default(0),
    /** Values that did not fit the type of their typed column (NULL there, kept in payload). */
    nonconforming: integer('nonconforming').notNull().default(0),
    /** A change of the list's columns its schema policy holds was applied on --accept-schema. */
    schemaAccepted: boolean('schema_accepted').notNull().default(false),
    /** Why the impact on a usage column could not be computed; the snapshot was applied regardless. */
    impactError: text('impact_error'),
    /** The digest of the entries as served (src/sync/collect/collect.ts): an unchanged sync's shortcut. */
    servedDigest: text('served_digest'),
  },
  (t) => [
    index('snapshots_target_idx').on(t.environment, t.listKey, t.variant, t.id),
    index('snapshots_last_ok_idx').on(t.environment, t.listKey, t.variant, t.id).where(sql`status = 'ok'`),
    index('snapshots_run_idx').on(t.runId),
    index('snapshots_unchanged_age_idx').on(t.fetchedAt).where(sql`status = 'ok' and not changed`),
  ],
);

export const entries = refdata.table(
  'entries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    environment: text('environment').notNull(),
    listKey: text('list_key').notNull(),
    variant: text('variant').notNull().default(''),
    entryKey: text('entry_key').notNull(),
    code: text('code'),
    description: text('description'),
    payload: jsonb('payload').notNull(),
    /** sha-256 (base64) of the canonical entry; equal hashes mean equal entries. */
    entryHash: text('entry_hash').notNull(),
    validFrom: tstz('valid_from').notNull(),
    validTo: tstz('valid_to'),
    firstSnapshotId: bigint('first_snapshot_id', { mode: 'number' }).notNull(),
    lastSnapshotId: bigint('last_snapshot_id', { mode: 'number' }),
  },
  (t) => [
    uniqueIndex('entries_current_uq').on(t.environment, t.listKey, t.variant, t.entryKey).where(sql`valid_to is null`),
    index('entries_history_idx').on(t.environment, t.listKey, t.variant, t.entryKey, t.validFrom),
  ],
);

export const entryChanges = refdata.table(
  'entry_changes',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    snapshotId: bigint('snapshot_id', { mode: 'number' })
      .notNull()
      .references(() => snapshots.id),
    environment: text('environment').notNull(),
    listKey: text('list_key').notNull(),
    variant: text('variant').notNull().default(''),
    entryKey: text('entry_key').notNull(),
    code: text('code'),
    change: text('change').notNull(),
    before: jsonb('before'),
    after: jsonb('after'),
    changedFields: text('changed_fields').array(),
    detectedAt: tstz('detected_at').notNull().defaultNow(),
    /** For a removed or modified code in use: per usage column, {column, rows, from, to, top}. */
    impact: jsonb('impact'),
    /**
     * The transaction that wrote the row (0 for rows written before migration 0015): with `id`, the
     * change feed's order, served only below the oldest transaction still open (refdata.change_feed).
     */
    txid: xid8('txid').notNull().default(sql`pg_current_xact_id()`),
    /**
     * The feed epoch the row was written in (refdata.change_feed_epochs): a constant default that
     * refsync raises by DDL when it finds the database restored, so that the rows written after a
     * restore come after every row of the history it restored, whatever their txid.
     */
    feedEpoch: integer('feed_epoch').notNull().default(0),
  },
  (t) => [
    index('entry_changes_detected_idx').on(t.detectedAt),
    index('entry_changes_target_idx').on(t.environment, t.listKey, t.variant, t.detectedAt),
    index('entry_changes_snapshot_idx').on(t.snapshotId),
    index('entry_changes_feed_order_idx').on(t.feedEpoch, t.txid, t.id),
  ],
);

/** Where each named reader of the change feed (`refsync changes --consumer NAME`) has got to. */
export const changeFeedConsumers = refdata.table('change_feed_consumers', {
  name: text('name').primaryKey(),
  position: text('position').notNull(),
  updatedAt: tstz('updated_at').notNull().defaultNow(),
  /** The lease of the one process reading under this name: its random token, who it is, until when. */
  leaseToken: text('lease_token'),
  leaseHolder: text('lease_holder'),
  leaseUntil: tstz('lease_until'),
});

/**
 * The change feed's epochs: one row per database history the feed has served from. Epoch 0 is the
 * database as migrated; refsync adds one when it finds the database restored into another cluster,
 * onto another timeline, or behind its own transaction ids (src/db/feed-epoch.ts).
 */
export const changeFeedEpochs = refdata.table('change_feed_epochs', {
  epoch: integer('epoch').primaryKey(),
  systemIdentifier: text('system_identifier'),
  timeline: integer('timeline'),
  /** The last position of the epoch before, when this one began (null for epoch 0, or an empty feed). */
  previousEnd: text('previous_end'),
  reason: text('reason').notNull(),
  beganAt: tstz('began_at').notNull().defaultNow(),
});

export const alerts = refdata.table(
  'alerts',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    /** Null for run_completed, which is about a run (runId). */
    snapshotId: bigint('snapshot_id', { mode: 'number' }).references(() => snapshots.id),
    runId: bigint('run_id', { mode: 'number' }).references(() => syncRuns.id),
    kind: text('kind').notNull(),
    payload: jsonb('payload').notNull(),
    createdAt: tstz('created_at').notNull().defaultNow(),
    deliveredAt: tstz('delivered_at'),
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    environment: text('environment').notNull(),
    listKey: text('list_key').notNull(),
    variant: text('variant').notNull().default(''),
    /** pending, delivered, dead (gave up after retries), disabled (endpoint answered 410), skipped (no channel). */
    state: text('state').notNull().default('pending'),
    nextAttemptAt: tstz('next_attempt_at').notNull().defaultNow(),
    /** When `refsync alerts retry` last requeued it: its retry budget counts from then. */
    requeuedAt: tstz('requeued_at'),
  },
  (t) => [
    uniqueIndex('alerts_snapshot_kind_uq').on(t.snapshotId, t.kind),
    uniqueIndex('alerts_run_kind_uq').on(t.runId, t.kind).where(sql`run_id is not null`),
    check('alerts_subject_ck', sql`snapshot_id is not null or run_id is not null`),
    index('alerts_finished_age_idx').on(t.createdAt).where(sql`state in ('delivered', 'skipped')`),
    index('alerts_pending_idx').on(t.nextAttemptAt).where(sql`state = 'pending'`),
  ],
);

/** The last ok snapshot of each target, kept by a trigger on snapshots (migration 0005): what /metrics reads. */
export const targetLastOk = refdata.table(
  'target_last_ok',
  {
    environment: text('environment').notNull(),
    listKey: text('list_key').notNull(),
    variant: text('variant').notNull(),
    snapshotId: bigint('snapshot_id', { mode: 'number' }).notNull(),
    fetchedAt: tstz('fetched_at').notNull(),
    entryCount: integer('entry_count'),
  },
  (t) => [primaryKey({ name: 'target_last_ok_pk', columns: [t.environment, t.listKey, t.variant] })],
);

/** Webhook endpoints the dispatcher has been told to stop using (HTTP 410 Gone). */
export const webhookEndpoints = refdata.table('webhook_endpoints', {
  url: text('url').primaryKey(),
  disabledAt: tstz('disabled_at'),
  reason: text('reason'),
  updatedAt: tstz('updated_at').notNull().defaultNow(),
});

/**
 * The typed columns of each per-list view: one row per field and type it has had. The row with no
 * `replaced_at` is the column as the view has it now; a widening closes it and opens the next.
 */
export const listColumns = refdata.table(
  'list_columns',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    listKey: text('list_key').notNull(),
    field: text('field').notNull(),
    columnName: text('column_name').notNull(),
    position: integer('position').notNull(),
    dataType: text('data_type').notNull(),
    firstSnapshotId: bigint('first_snapshot_id', { mode: 'number' }),
    lastSnapshotId: bigint('last_snapshot_id', { mode: 'number' }),
    recordedAt: tstz('recorded_at').notNull().defaultNow(),
    replacedAt: tstz('replaced_at'),
  },
  (t) => [
    uniqueIndex('list_columns_field_uq').on(t.listKey, t.field).where(sql`replaced_at is null`),
    uniqueIndex('list_columns_name_uq').on(t.listKey, t.columnName).where(sql`replaced_at is null`),
  ],
);

/** Per-list views waiting to be re-created (a column changed type) while objects of the user depend on them. */
export const listViewsWaiting = refdata.table('list_views_waiting', {
  listKey: text('list_key').primaryKey(),
  since: tstz('since').notNull().defaultNow(),
  snapshotId: bigint('snapshot_id', { mode: 'number' }),
  views: text('views').array().notNull(),
  dependents: text('dependents').array().notNull(),
  columns: jsonb('columns').notNull().default(sql`'[]'::jsonb`),
});
