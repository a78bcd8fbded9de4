// Every command's options, in one table that both the parser and the help read: an option cannot be
// parsed without appearing in `refsync <command> --help`, nor described there without being parsed.

/** A node:util parseArgs option, with what help shows for it. */
export interface OptionSpec {
  type: 'string' | 'boolean';
  /** A one-letter alias, where a tool users know has one (psql's -c). */
  short?: string;
  multiple?: boolean;
  default?: string | boolean;
  /** Placeholder of the value in help, e.g. KEY. */
  value?: string;
  help: string;
}

const json = { type: 'boolean', default: false, help: 'print JSON instead of text' } as const;
const acceptRemovals = {
  type: 'boolean',
  default: false,
  help: 'apply a fetch even if it would retire more than REFSYNC_MAX_REMOVED_FRACTION of a list (accepts a held list)',
} as const;
const acceptSchema = {
  type: 'boolean',
  default: false,
  help: "apply the held change of a list's columns once (REFSYNC_SCHEMA_CHANGES hold-breaking or freeze); needs --list",
} as const;
const list = { type: 'string', multiple: true, value: 'KEY', help: 'only this list key; repeat it or give a comma list (default: all configured)' } as const;

export const commandOptions = {
  migrate: {},
  sync: {
    list,
    'accept-removals': acceptRemovals,
    'accept-schema': acceptSchema,
    json: { ...json, help: 'print the run as JSON, and no progress on stderr' },
  },
  worker: {},
  trigger: {
    list,
    slot: { type: 'string', value: 'ID', help: 'name of the run; the same slot is enqueued once (for retried hooks)' },
    'accept-removals': acceptRemovals,
    'accept-schema': acceptSchema,
    json: { ...json, help: 'print the queued runs as JSON' },
  },
  status: {
    list: {
      type: 'string',
      value: 'KEY',
      help: 'the detail of one list: its state, the held or failed reason and the command that resolves it, last snapshots, last changes',
    },
    source: { type: 'string', value: 'NAME', help: 'with --list: only this source (its name or its environment)' },
    json: { ...json, help: 'print JSON, every field' },
  },
  changes: {
    list,
    since: { type: 'string', value: 'ISO-8601', help: 'only changes detected at or after this date or time' },
    environment: { type: 'string', value: 'E', help: 'only changes of this environment' },
    after: {
      type: 'string',
      value: 'POSITION',
      help: 'read the change feed oldest first, after this position (that of the last change you processed)',
    },
    'from-start': { type: 'boolean', default: false, help: 'read the change feed from the start of history (or start a new consumer there)' },
    follow: {
      type: 'boolean',
      default: false,
      help: 'keep reading the feed as changes commit (alone: from its end), until Ctrl-C or SIGTERM (exit 0); needs DATABASE_URL',
    },
    consumer: {
      type: 'string',
      value: 'NAME',
      help: 'read the feed after the position committed under NAME, one process at a time; it moves only when committed (see below)',
    },
    commit: {
      type: 'string',
      value: 'POSITION',
      help: 'with --consumer: commit POSITION as processed (only forwards, only a position the feed returned), and read nothing',
    },
    exec: {
      type: 'string',
      value: 'CMD',
      help: "with a consumer: pipe each batch of lines to a run of CMD (sh -c), committing the batch's last position when CMD exits 0",
    },
    batch: { type: 'string', value: 'N', help: 'at most N changes in each batch piped to CMD (default 1000)' },
    limit: {
      type: 'string',
      value: 'N',
      help: 'at most N changes: 1 to 100000, default 100; reading the feed, any number, default all (with --follow: until stopped)',
    },
    json: { ...json, help: 'print JSON; reading the feed, one object per line (JSON Lines), each with its position' },
  },
  alerts: {
    pending: { type: 'boolean', default: false, help: 'only alerts not yet delivered' },
    json,
    limit: { type: 'string', value: 'N', help: 'at most N alerts, 1 to 10000 (default 50)' },
  },
  versions: {
    json,
    environment: { type: 'string', value: 'E', help: 'compare in this environment only' },
  },
  diff: {
    list: { ...list, help: 'the list key to compare (exactly one)' },
    from: { type: 'string', value: 'ISO-8601', help: 'the earlier time: the list as it was then' },
    to: { type: 'string', value: 'ISO-8601', help: 'the later time (default: now)' },
    variant: { type: 'string', value: 'V', help: "only this variant (carrier, charge-code version; '' for the others)" },
    environment: { type: 'string', value: 'E', help: 'only this environment' },
    json: { ...json, help: 'print JSON: {list_key, from, to, first_synced_at, changes: [...]}' },
  },
  impact: {
    list: { ...list, help: 'orphans only: this list key; repeat it or give a comma list (default: every usage column)' },
    at: { type: 'string', value: 'ISO-8601', help: 'orphans only: match the codes valid at this time, not the current ones' },
    json: { ...json, help: 'print JSON: orphans [{column, value, rows}], pin [{code, change, rows, changed_fields}]' },
  },
  'export-dbt': {
    out: { type: 'string', value: 'FILE', help: 'write to FILE instead of stdout' },
    'dbt-version': { type: 'string', value: 'V', help: 'your dbt version: 1.10 or later (default), 1.9 or 1.8 (which read the older syntax)' },
    schedule: { type: 'string', value: 'CRON', help: 'the sync schedule freshness is derived from (default: REFSYNC_SCHEDULE, else hourly)' },
  },
  'webhook-secret': {},
  'check-auth': { json: { ...json, help: "print each source's outcome as JSON" } },
  sandbox: {
    port: { type: 'string', value: 'N', help: 'HTTPS port, 0 for any free one (default 8443)' },
    host: { type: 'string', value: 'H', help: 'address to listen on (default 127.0.0.1)' },
    latency: { type: 'string', value: 'MS', help: 'delay every response by MS milliseconds (default 0)' },
    'control-secret': { type: 'string', value: 'S', help: 'secret of the /__sandbox/ control endpoints (default: generated)' },
    'nmfc-count': { type: 'string', value: 'N', help: 'serve a generated nmfc_codes list of N entries' },
    san: { type: 'string', multiple: true, value: 'NAME', help: 'extra host name or IP address in the certificate; repeatable' },
    'cert-dir': {
      type: 'string',
      value: 'DIR',
      help: 'where the CA, certificate, control secret and data changes are kept across restarts (default ./.refsync/sandbox)',
    },
    reset: { type: 'boolean', default: false, help: 'start from the bundled data, forgetting the data changes made through the control API' },
  },
  prune: {
    'dry-run': { type: 'boolean', default: false, help: 'count what would be deleted; delete nothing' },
    json: { ...json, help: 'print the counts as JSON' },
  },
  sql: {
    command: { type: 'string', short: 'c', value: 'SQL', help: 'the SQL to run, as psql -c takes it (or give it as the argument)' },
    json: { ...json, help: "print each statement's rows as JSON" },
    write: { type: 'boolean', default: false, help: 'let the SQL change data (read-only without it); it runs as the DATABASE_URL role' },
  },
  demo: {},
} as const satisfies Record<string, Record<string, OptionSpec>>;

export type CommandName = keyof typeof commandOptions;
