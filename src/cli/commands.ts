// The command table of CONTRACT.md. Each command lives in its own module, loaded only when run,
// so `refsync --help` and light commands start fast.
export interface CommandModule {
  run(argv: string[]): Promise<number>;
}

export interface CommandEntry {
  name: string;
  usage: string;
  summary: string;
  load(): Promise<CommandModule>;
}

export const commands: CommandEntry[] = [
  { name: 'migrate', usage: 'migrate', summary: 'apply the migrations in migrations/ to DATABASE_URL (idempotent)', load: () => import('./migrate.ts') },
  { name: 'sync', usage: 'sync [--list KEY ...] [--accept-removals] [--json]', summary: 'sync the configured lists now, in process (no Redis)', load: () => import('./sync.ts') },
  { name: 'worker', usage: 'worker', summary: 'run the BullMQ worker and its schedules; serve health, metrics, dashboard', load: () => import('./worker.ts') },
  { name: 'trigger', usage: 'trigger [--list KEY ...]', summary: 'enqueue a sync now through Redis, for a running worker', load: () => import('./trigger.ts') },
  { name: 'status', usage: 'status [--json]', summary: 'last run and last change per list and variant; the queue state', load: () => import('./status.ts') },
  { name: 'changes', usage: 'changes [--list KEY] [--since ISO-8601] [--limit N] [--json]', summary: 'recorded entry changes, newest first', load: () => import('./changes.ts') },
  { name: 'alerts', usage: 'alerts [--pending] [--json] [--limit N] | alerts retry ID ...', summary: 'alerts and their delivery state; requeue a dead one', load: () => import('./alerts.ts') },
  { name: 'versions', usage: 'versions diff A B [--json] [--environment E]', summary: 'codes only in A, only in B, and changed, between two charge-code versions', load: () => import('./versions.ts') },
  { name: 'impact', usage: 'impact orphans [--list KEY] [--at ISO-8601] [--json] | impact pin FROM TO [--json]', summary: "codes your facts use that no list holds; what a charge-code re-pin moves, weighted by your facts", load: () => import('./impact.ts') },
  { name: 'export-dbt', usage: 'export-dbt [--out FILE]', summary: 'print a dbt sources.yml for schema refdata', load: () => import('./export-dbt.ts') },
  { name: 'check-auth', usage: 'check-auth', summary: 'log in and call /v2/auth/me/; print who the credential belongs to', load: () => import('./check-auth.ts') },
  { name: 'sandbox', usage: 'sandbox [--port N] [--host H] [--san NAME] [--cert-dir DIR] [--latency MS]', summary: 'serve the bundled upstream simulator over HTTPS', load: () => import('./sandbox.ts') },
  { name: 'demo', usage: 'demo', summary: 'the whole job on embedded defaults: sandbox, sync, change, sync, diff, alerts', load: () => import('./demo.ts') },
];
