import { loadConfig } from '../../config/load.ts';
import { usageFor } from '../../config/usage.ts';
import { type Database, EMBEDDED_DATA_DIR } from '../../db/database.ts';
import { CHARGE_CODE_VERSION_2024, CHARGE_CODE_VERSION_2025, SANDBOX_MACHINE_ACCOUNT, startSandbox, type Sandbox } from '../../sandbox/index.ts';
import { runSync, type RunResult } from '../../sync/run/run-sync.ts';
import { createUpstreamClient } from '../../upstream/index.ts';
import { ResourceStack } from '../../queue/worker/resource-stack.ts';
import { createLogger } from '../../util/logger.ts';
import { parseCommandArgs } from '../args.ts';
import { databaseUrlFromEnv, openCliDatabase } from '../database.ts';
import { syncPool } from '../../db/connection-budget.ts';
import { openAlertDelivery } from './deliver-alerts.ts';
import { createDemoFacts, DEMO_FACTS, demoUsage, printDemoImpact } from '../demo/demo-facts.ts';
import { startDemoReceiver, type DemoReceiver } from '../demo/demo-receiver.ts';
import { progressLine, summaryLine } from '../output/sync-report.ts';
import { formatTable } from '../output/table.ts';
import { demoChanges, demoAlerts } from '../demo/demo-sql.ts';

const print = (line = '') => process.stdout.write(`${line}\n`);

/** Settings a user may bring to the demo: where alerts go and which kinds fire. Upstream ones are the demo's own. */
const passThrough = /^(REFSYNC_WEBHOOK_|REFSYNC_ALERT_|LOG_LEVEL$|DATABASE_URL$|REFSYNC_CONCURRENCY$|REFSYNC_DB_MAX_CONNECTIONS$)/;

function demoEnvironment(): string {
  return `demo-${new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)}`;
}

/** The three changes the demo makes upstream, as a data team would meet them. */
function changeSandbox(sandbox: Sandbox): string[] {
  const c = sandbox.control;
  c.addEntry('charge_codes', { code: 'EVCH', description: 'Electric vehicle charging', category: 'accessorial' }, { version: CHARGE_CODE_VERSION_2025 });
  c.removeEntry('accessorials', 'LGDEL');
  c.modifyEntry('equipment_types', 'REEFER', { name: 'Refrigerated Van (Reefer)' });
  return [
    `new charge code EVCH "Electric vehicle charging" in version ${CHARGE_CODE_VERSION_2025}`,
    'accessorial LGDEL (Liftgate Delivery) retired',
    'equipment type REEFER renamed to "Refrigerated Van (Reefer)"',
  ];
}

async function printChanges(db: Database, environment: string): Promise<void> {
  const { rows } = await db.query<{
    list_key: string;
    variant: string;
    change: string;
    code: string;
    fields: string | null;
    before: string | null;
    after: string | null;
  }>(demoChanges, [environment]);
  print(
    formatTable(
      ['list', 'variant', 'change', 'code', 'fields', 'before', 'after'],
      rows.map((r) => [r.list_key, r.variant || null, r.change, r.code, r.fields || null, r.before, r.after]),
    ),
  );
}

async function printAlerts(db: Database, environment: string): Promise<void> {
  const { rows } = await db.query<{ id: number; kind: string; list_key: string; variant: string; state: string; codes: string | null }>(demoAlerts, [
    environment,
  ]);
  if (rows.length === 0) {
    print('no alerts fired');
    return;
  }
  print(
    formatTable(
      ['alert', 'kind', 'list', 'variant', 'codes', 'delivery'],
      rows.map((r) => [r.id, r.kind, r.list_key, r.variant || null, r.codes, r.state]),
    ),
  );
}

function printRun(result: RunResult, onlyChanged: boolean): void {
  for (const o of result.outcomes) if (!onlyChanged || o.status !== 'unchanged') print(progressLine(o));
  print(summaryLine(result));
}

/** Sets the environment so the configuration points at the sandbox, its demo source and the demo's receiver (when it runs one). */
function pointAtDemo(env: Record<string, string | undefined>, sandbox: Sandbox, environment: string, receiver: DemoReceiver | undefined): void {
  if (receiver) {
    Object.assign(env, {
      REFSYNC_WEBHOOK_URL: receiver.url,
      REFSYNC_WEBHOOK_SECRET: receiver.secret,
      REFSYNC_WEBHOOK_FORMAT: 'json',
      REFSYNC_WEBHOOK_ALLOW_PRIVATE: 'true',
    });
  }
  Object.assign(env, {
    REFSYNC_BASE_URL: sandbox.url,
    REFSYNC_CA_FILE: sandbox.caFile,
    REFSYNC_EMAIL: SANDBOX_MACHINE_ACCOUNT.email,
    REFSYNC_PASSWORD: SANDBOX_MACHINE_ACCOUNT.password,
    REFSYNC_ENVIRONMENT: environment,
    REFSYNC_CHARGE_CODE_VERSIONS: `${CHARGE_CODE_VERSION_2024},${CHARGE_CODE_VERSION_2025},unpinned`,
    REFSYNC_ALERT_ON: env.REFSYNC_ALERT_ON ?? 'added,removed,modified,reappeared,schema_changed,nonconforming,held,failed,used_code_changed',
  });
}

function printReceived(receiver: DemoReceiver): void {
  print('\n7. What the webhook receiver got (Standard Webhooks signature checked with the standardwebhooks library):');
  const rows = receiver.received.map((w) => {
    const codes = [...new Set((w.body.data?.entries ?? w.body.data?.impact ?? []).map((e) => e.code))].join(', ');
    return [w.id, w.type, w.body.data?.list_key, w.body.data?.variant || null, codes, w.verified ? 'verified' : 'INVALID'];
  });
  print(formatTable(['webhook id', 'type', 'list', 'variant', 'codes', 'signature'], rows));
}

function printTryNext(environment: string): void {
  print('\nTry next:');
  print('  npx refsync status            # last run and last change per list');
  print('  npx refsync changes --list charge_codes');
  // refsync sql reads the database the demo wrote (DATABASE_URL, else ./.refsync/pgdata), which no other client can open.
  print(
    `  npx refsync sql "select code, description, category, is_active from refdata.charge_codes where environment = '${environment}' and version = '${CHARGE_CODE_VERSION_2025}'"`,
  );
  print('  npx refsync sql               # a SQL prompt on the same database (\\q to quit)');
}

export async function run(argv: string[]): Promise<number> {
  parseCommandArgs('demo', argv);
  const logger = createLogger({ level: process.env.LOG_LEVEL ?? 'warn' });
  // Closed on every way out: a failure before the demo starts (a DATABASE_URL not migrated, a bad
  // setting) left the sandbox and the receiver listening, and the process never exited.
  const resources = new ResourceStack(logger);
  try {
    const sandbox = await startSandbox({ logger });
    resources.push('sandbox', () => sandbox.close());
    const environment = demoEnvironment();
    const env: Record<string, string | undefined> = Object.fromEntries(Object.entries(process.env).filter(([k]) => passThrough.test(k)));
    // Without a webhook of the user's, the demo brings its own receiver, so the signed delivery is seen too.
    const receiver: DemoReceiver | undefined = env.REFSYNC_WEBHOOK_URL ? undefined : await startDemoReceiver();
    if (receiver) resources.push('webhook receiver', () => receiver.close());
    pointAtDemo(env, sandbox, environment, receiver);
    const config = loadConfig(env);
    const source = config.sources[0]!;
    source.usage = usageFor(source, demoUsage);
    const databaseUrl = databaseUrlFromEnv();
    const pool = syncPool(config.dbMaxConnections, config.concurrency);
    const db = await openCliDatabase({ databaseUrl, logger, migrateEmbedded: true, poolSize: pool.poolSize });
    resources.push('database', () => db.close());
    const client = createUpstreamClient(source, logger);
    resources.push('upstream client', () => client.close());
    const alerts = openAlertDelivery(db, config, logger, receiver ? { ca: receiver.caPem } : {});
    resources.push('alert delivery', () => alerts.close());
    const sync = () => runSync({ db, sources: [source], clientFor: () => client, trigger: 'cli', logger, concurrency: pool.concurrency }).then((r) => r[0]!);
    return await showDemo({
      db,
      sandbox,
      receiver,
      environment,
      databaseUrl,
      webhookUrl: env.REFSYNC_WEBHOOK_URL,
      sync,
      deliverAlerts: () => alerts.deliver(),
    });
  } finally {
    await resources.closeAll();
  }
}

interface DemoParts {
  db: Database;
  sandbox: Sandbox;
  receiver: DemoReceiver | undefined;
  environment: string;
  databaseUrl: string | undefined;
  webhookUrl: string | undefined;
  sync: () => Promise<RunResult>;
  deliverAlerts: () => Promise<unknown>;
}

/** The demo's steps, printed: what it runs on, two syncs around a change upstream, and what came of it. */
async function showDemo(d: DemoParts): Promise<number> {
  print(`refsync demo — environment label '${d.environment}'`);
  print(`upstream: the bundled sandbox at ${d.sandbox.url} (HTTPS; throwaway CA in ${d.sandbox.caFile})`);
  print(
    `alerts: ${d.receiver ? `a local webhook receiver at ${d.receiver.url} (the demo's own; set REFSYNC_WEBHOOK_URL for yours)` : `REFSYNC_WEBHOOK_URL (${new URL(d.webhookUrl!).origin})`}`,
  );
  print(
    `database: ${d.databaseUrl ? `DATABASE_URL (${new URL(d.databaseUrl).host}${new URL(d.databaseUrl).pathname})` : `embedded PGlite in ${EMBEDDED_DATA_DIR}`}`,
  );
  await createDemoFacts(d.db);
  print(`your data: ${DEMO_FACTS} (120 shipments), its accessorial and equipment_type columns named as usage sources`);

  print('\n1. First sync: every list and variant (the baseline; no alerts for it)');
  printRun(await d.sync(), false);

  print('\n2. The upstream changes:');
  for (const line of changeSandbox(d.sandbox)) print(`   - ${line}`);

  print('\n3. Second sync: only what changed costs more than a hash compare');
  const second = await d.sync();
  printRun(second, true);
  await d.deliverAlerts();

  print('\n4. What changed (refdata.entry_changes):');
  await printChanges(d.db, d.environment);
  print('\n5. Alerts that fired (refdata.alerts, the outbox; each also goes to the log):');
  await printAlerts(d.db, d.environment);
  print(`\n6. Impact on your data: facts of the last 90 days in ${DEMO_FACTS} that use a retired or modified code`);
  await printDemoImpact(d.db, d.environment, print);
  if (d.receiver) printReceived(d.receiver);
  printTryNext(d.environment);
  return second.status === 'succeeded' ? 0 : 1;
}
