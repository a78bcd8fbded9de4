// The command table of docs/contract.md. Each command lives in its own module, loaded only when run,
// so `refsync --help` and light commands start fast. Options live in options.ts, shared with the parser.
import type { CommandName } from './options.ts';

export interface CommandModule {
  run(argv: string[]): Promise<number>;
}

export interface CommandEntry {
  name: CommandName;
  /** Positional arguments as help shows them; none when absent. */
  positionals?: string;
  summary: string;
  /** Lines help prints after the options: examples, the settings the command reads. */
  notes?: string[];
  /** It syncs lists in this process: it runs with an old-space limit from the memory budget (src/memory/heap-flags.ts). */
  syncsLists?: true;
  load(): Promise<CommandModule>;
}

export const commands: CommandEntry[] = [
  {
    name: 'migrate',
    summary: 'apply the migrations in migrations/ to DATABASE_URL (idempotent)',
    notes: [
      'Without DATABASE_URL it migrates the embedded database in ./.refsync/pgdata.',
      'A database a newer refsync migrated is refused (exit 2); see "Upgrading" in docs/production.md.',
    ],
    load: () => import('./commands/migrate.ts'),
  },
  {
    name: 'sync',
    syncsLists: true,
    summary: 'sync the configured lists now, in process (no Redis)',
    notes: [
      'On a terminal, stderr shows live progress: pages, entries, rate, and a bar when the service states a total (not with NO_COLOR or TERM=dumb).',
      'Exit status: 0 all synced, 1 some list failed or was held, 2 bad settings or arguments.',
    ],
    load: () => import('./commands/sync.ts'),
  },
  {
    name: 'worker',
    syncsLists: true,
    summary: 'run the BullMQ worker and its schedules; serve health, metrics, dashboard',
    notes: [
      'Serves /healthz /readyz /metrics /admin/queues on REFSYNC_HTTP_HOST:REFSYNC_HTTP_PORT.',
      'Exits 2 when a newer refsync migrates the database (checked every REFSYNC_SCHEMA_CHECK_INTERVAL_MS).',
    ],
    load: () => import('./commands/worker.ts'),
  },
  {
    name: 'trigger',
    summary: 'enqueue a sync now through Redis, for a running worker',
    load: () => import('./commands/trigger.ts'),
  },
  {
    name: 'status',
    summary: 'last run and last change per list and variant; the queue state',
    notes: [
      'One line per list and variant, fitted to the terminal: the reason of a held or failed list is shortened to fit.',
      'status --list KEY shows one list in full: the reason, the command that resolves it, last snapshots and changes.',
    ],
    load: () => import('./commands/status.ts'),
  },
  {
    name: 'changes',
    summary: 'recorded entry changes, newest first; or the change feed, oldest first, from a position',
    notes: [
      'With --after, --follow or --consumer it reads the change feed (refdata.change_feed): every change once, in commit-safe order, one line each, its position first. Resume with --after and the last position you processed, or let --consumer NAME remember it.',
      "A consumer's position moves only when its reader commits: --consumer NAME --commit POSITION once the lines up to POSITION are processed, or --exec CMD, which commits each batch CMD exits 0 on. A new name needs --after or --from-start; one process at a time per name.",
      '--list and --environment choose what is printed; the position still moves past the changes they leave out, so give each selection its own consumer name.',
      '--follow wakes on NOTIFY refdata_changes (on REFSYNC_LISTEN_DATABASE_URL when set) and polls every five seconds; it reconnects by itself when Postgres restarts, saying so on stderr, and resumes after the last line it printed.',
      "Example: refsync changes --consumer warehouse --json --exec 'load-into-warehouse' (again: it resumes after the last batch loaded). See docs/change-feed.md.",
    ],
    load: () => import('./commands/changes.ts'),
  },
  {
    name: 'alerts',
    positionals: '[retry ID ...]',
    summary: 'alerts and their delivery state; `alerts retry ID` requeues a dead one, or replays a delivered one',
    notes: ["A replay carries the alert's webhook-id again: a receiver that deduplicates by it keeps one copy. See docs/alerts.md."],
    load: () => import('./commands/alerts.ts'),
  },
  {
    name: 'versions',
    positionals: 'diff A B',
    summary: 'codes removed (only in A), added (only in B) and modified, between two charge-code versions',
    load: () => import('./commands/versions.ts'),
  },
  {
    name: 'diff',
    summary: 'what changed in one list between two times: added, removed, modified with before → after',
    notes: [
      'Example: refsync diff --list accessorials --from 2026-03-01 --to 2026-06-01',
      "In SQL: select * from refdata.entries_diff('accessorials', '2026-03-01', '2026-06-01').",
    ],
    load: () => import('./commands/diff.ts'),
  },
  {
    name: 'impact',
    positionals: 'orphans | pin FROM TO',
    summary: 'codes your facts use that no list holds; what a charge-code re-pin moves, weighted by your facts',
    notes: [
      'impact orphans [--list KEY] [--at ISO-8601]: fact values of the usage columns (REFSYNC_CONFIG usage) that match no current code, or none valid at --at.',
      'impact pin FROM TO: codes only in FROM (removed), only in TO (added) or modified, each with the facts in use that carry it.',
    ],
    load: () => import('./commands/impact.ts'),
  },
  { name: 'export-dbt', summary: 'print a dbt sources.yml for schema refdata', load: () => import('./commands/export-dbt.ts') },
  {
    name: 'webhook-secret',
    summary: 'print a fresh Standard Webhooks secret (whsec_...) for REFSYNC_WEBHOOK_SECRET and the receiver',
    notes: [
      'Example: refsync webhook-secret > secrets/webhook && export REFSYNC_WEBHOOK_SECRET_FILE=secrets/webhook',
      'Give the same secret to the receiver, which checks the webhook-signature header with it (docs/alerts.md).',
    ],
    load: () => import('./commands/webhook-secret.ts'),
  },
  { name: 'check-auth', summary: 'log in and call /v2/auth/me/; print who the credential belongs to', load: () => import('./commands/check-auth.ts') },
  { name: 'sandbox', summary: 'serve the bundled upstream simulator over HTTPS', load: () => import('./commands/sandbox.ts') },
  {
    name: 'prune',
    summary: 'delete old unchanged snapshots, delivered alerts and finished runs (as the worker does hourly)',
    notes: [
      'Settings: REFSYNC_RETAIN_SNAPSHOTS_DAYS (default 30), REFSYNC_RETAIN_ALERTS_DAYS (90) and REFSYNC_RETAIN_RUNS_DAYS (90); 0 keeps that kind forever.',
      'Each list keeps its last snapshot and last good one; changed, held and failed snapshots and the history stay.',
      'A dry run counts runs prunable now; deleting snapshots may free more.',
    ],
    load: () => import('./commands/prune.ts'),
  },
  {
    name: 'sql',
    positionals: '["SQL"]',
    summary: 'run SQL (read-only unless --write) against DATABASE_URL or the embedded database',
    notes: [
      'Example: refsync sql "select list_key, variant, last_synced_at from refdata.list_sync_times"',
      'Several statements separated by ; print one table each. Without SQL it reads stdin, or on a terminal opens a prompt (\\q to quit).',
      'Read-only unless --write: with it the SQL runs as the DATABASE_URL role (on the embedded database, its owner), which may change or drop anything refsync keeps.',
    ],
    load: () => import('./commands/sql.ts'),
  },
  {
    name: 'demo',
    syncsLists: true,
    summary: 'the whole job on embedded defaults: sandbox, sync, change, sync, diff, alerts',
    load: () => import('./commands/demo.ts'),
  },
];
