import { randomBytes } from 'node:crypto';
import { afterEach, beforeAll, expect } from 'vitest';
import type { AppConfig, SourceConfig } from '../../src/config/types.ts';
import { loadConfig } from '../../src/config/load.ts';
import { createAlertDispatcher, type AlertDispatcherOptions, type DrainResult } from '../../src/alerts/dispatcher.ts';
import type { Database } from '../../src/db/database.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { runSync } from '../../src/sync/run/run-sync.ts';
import { createUpstreamClient, type UpstreamClient } from '../../src/upstream/index.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { sandboxEnv } from '../helpers/source.ts';
import { silentLogger, type Logger } from '../../src/util/logger.ts';

export const VERSION = '2024-06-11';

export function newSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

let counter = 0;
/** An environment label of its own per test, so each test's dispatcher sees only its alerts. */
export function uniqueEnvironment(prefix = 'alerts'): string {
  return `${prefix}-${process.pid}-${++counter}`;
}

export interface AlertFixture {
  config: AppConfig;
  source: SourceConfig;
  /** The environment a user would set for this configuration (for CLI subprocesses). */
  env: Record<string, string>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

/** A source on the sandbox (charge codes of one version only, to stay fast) with its webhook settings. */
export function alertFixture(db: Database, dbUrl: string, sandbox: Sandbox, extra: Record<string, string> = {}): AlertFixture {
  const env = sandboxEnv(sandbox, {
    REFSYNC_ENVIRONMENT: uniqueEnvironment(),
    REFSYNC_LISTS: 'charge_codes',
    REFSYNC_CHARGE_CODE_VERSIONS: VERSION,
    DATABASE_URL: dbUrl,
    ...extra,
  });
  const config = loadConfig(env);
  const source = config.sources[0]!;
  const clients: UpstreamClient[] = [];
  return {
    config,
    source,
    env,
    async sync() {
      const client = createUpstreamClient(source, undefined, {
        retry: { attempts: 2, baseDelayMs: 5, maxDelayMs: 20, maxRetryAfterMs: 50 },
        timeouts: { connectMs: 2000, headersMs: 2000, bodyMs: 2000 },
      });
      clients.push(client);
      await runSync({ db, sources: [source], clientFor: () => client, trigger: 'cli' });
    },
    async close() {
      await Promise.all(clients.splice(0).map((c) => c.close()));
    },
  };
}

/** A dispatcher for tests: tiny backoff, short timeouts, trusting the receivers' CA. */
export function testDispatcher(db: Database, config: AppConfig, ca: string, extra: Partial<AlertDispatcherOptions> & { logger?: Logger } = {}) {
  return createAlertDispatcher({
    db,
    config,
    logger: silentLogger,
    listen: false,
    pollIntervalMs: 50,
    timeoutMs: 3000,
    ca,
    retry: { baseDelayMs: 1, maxDelayMs: 5 },
    ...extra,
  });
}

/** One drain by a fresh test dispatcher, stopped afterwards. */
export async function drainWithTestDispatcher(
  db: Database,
  config: AppConfig,
  ca: string,
  extra: Partial<AlertDispatcherOptions> & { logger?: Logger } = {},
): Promise<DrainResult> {
  const dispatcher = testDispatcher(db, config, ca, extra);
  try {
    return await dispatcher.drainOnce();
  } finally {
    await dispatcher.stop();
  }
}

/** The receiver's webhook settings: its URL, a fresh secret, private addresses allowed (it runs on localhost). */
export function webhookEnv(receiver: { url: string }, extra: Record<string, string> = {}): Record<string, string> {
  return { REFSYNC_WEBHOOK_URL: receiver.url, REFSYNC_WEBHOOK_SECRET: newSecret(), REFSYNC_WEBHOOK_ALLOW_PRIVATE: 'true', ...extra };
}

export interface AlertFiles {
  /** The file's sandbox (set in beforeAll). */
  sandbox(): Sandbox;
  /** A fixture on the file's sandbox, closed after the test. */
  fixture(extra?: Record<string, string>): AlertFixture;
  /** Adds a charge code to the sandbox (`<codePrefix>01`, `02`, ...) and returns it. */
  addCode(description: string, category?: string): string;
}

/** What every alerts test file sets up: a sandbox of its own and fixtures closed after each test. */
export function useAlertFixtures(t: { readonly db: Database; readonly url: string }, codePrefix: string): AlertFiles {
  let sandbox: Sandbox | undefined;
  let codeSeq = 0;
  const fixtures: AlertFixture[] = [];
  beforeAll(async () => {
    sandbox = await useSandbox();
  });
  afterEach(async () => {
    await Promise.all(fixtures.splice(0).map((f) => f.close()));
  });
  const started = (): Sandbox => {
    if (!sandbox) throw new Error('the alerts sandbox starts in beforeAll');
    return sandbox;
  };
  return {
    sandbox: started,
    fixture(extra = {}) {
      const fx = alertFixture(t.db, t.url, started(), extra);
      fixtures.push(fx);
      return fx;
    },
    addCode(description, category = 'accessorial') {
      const code = `${codePrefix}${String(++codeSeq).padStart(2, '0')}`;
      started().control.addEntry('charge_codes', { code, description, category }, { version: VERSION });
      return code;
    },
  };
}

export interface AlertRowView {
  id: number;
  kind: string;
  state: string;
  attempts: number;
  last_error: string | null;
  delivered_at: Date | null;
  payload: Record<string, unknown>;
}

export async function alertsOf(db: Database, environment: string): Promise<AlertRowView[]> {
  const { rows } = await db.query<AlertRowView>(
    'select id, kind, state, attempts, last_error, delivered_at, payload from refdata.alerts where environment = $1 order by id',
    [environment],
  );
  return rows;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * What Slack receives for one new charge code served with `entry`: a baseline sync, the code added
 * upstream, a second sync, and the one alert delivered in Slack format to `receiver` (the test's
 * own, from ./receiver.ts). Returns the delivered text and the kinds in the outbox.
 */
export async function slackTextOfNewCode(
  receiver: { url: string; caPem: string; requests: Array<{ body: string }> },
  db: Database,
  dbUrl: string,
  sandbox: Sandbox,
  entry: Record<string, unknown>,
): Promise<{ text: string; kinds: string[] }> {
  const fx = alertFixture(db, dbUrl, sandbox, { REFSYNC_WEBHOOK_URL: receiver.url, REFSYNC_WEBHOOK_FORMAT: 'slack', REFSYNC_WEBHOOK_ALLOW_PRIVATE: 'true' });
  try {
    await fx.sync();
    sandbox.control.addEntry('charge_codes', entry, { version: VERSION });
    await fx.sync();
    expect(await drainWithTestDispatcher(db, fx.config, receiver.caPem)).toMatchObject({ delivered: 1 });
    const kinds = (await alertsOf(db, fx.source.environment)).map((a) => a.kind);
    return { text: (JSON.parse(receiver.requests[0]!.body) as { text: string }).text, kinds };
  } finally {
    await fx.close();
  }
}
