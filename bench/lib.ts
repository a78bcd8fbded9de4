// Shared pieces of the benchmarks: the machine line, a throwaway database per script, the sandbox
// (in a child process by default, so its CPU use shows up as the other process on the same cores,
// as a real upstream would not, rather than inside the measured event loop), and the figure lines.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { arch, cpus, release, totalmem, type } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { Agent, request } from 'undici';
import { loadConfig } from '../src/config/load.ts';
import type { SourceConfig } from '../src/config/types.ts';
import { openDatabase, type Database } from '../src/db/database.ts';
import { migrateDatabase } from '../src/columns/migrate-views.ts';
import { SANDBOX_MACHINE_ACCOUNT, startSandbox, type RequestLogEntry, type Sandbox } from '../src/sandbox/index.ts';

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export function serverUrl(): string {
  return process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
}

export function redisUrl(): string {
  return process.env.REDIS_URL ?? DEFAULT_REDIS_URL;
}

/** Every charge-code version the sandbox publishes, plus unpinned: "every list and variant". */
export const ALL_CHARGE_CODE_VERSIONS = '2024-06-11,2025-09-01,unpinned';

// ---------------------------------------------------------------------------------------------
// Figures

export interface Figure {
  /** e.g. `P3 load`. */
  name: string;
  value: number;
  unit: string;
  baselineName: string;
  baseline: number;
  /** value / baseline. */
  ratio: number;
  /** Met when the ratio is on the right side of it (undefined: no target). */
  target?: { ratio: number; better: 'lower' | 'higher' };
  /** Extra facts printed after the ratio (requests, concurrency, ...). */
  notes?: string;
}

export function figure(
  name: string,
  value: number,
  unit: string,
  baselineName: string,
  baseline: number,
  extra: { target?: Figure['target']; notes?: string } = {},
): Figure {
  const f: Figure = { name, value, unit, baselineName, baseline, ratio: baseline > 0 ? value / baseline : Number.NaN };
  if (extra.target) f.target = extra.target;
  if (extra.notes) f.notes = extra.notes;
  return f;
}

export function met(f: Figure): boolean | undefined {
  if (!f.target) return undefined;
  return f.target.better === 'lower' ? f.ratio <= f.target.ratio : f.ratio >= f.target.ratio;
}

function num(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Math.abs(n) >= 100) return String(Math.round(n));
  if (Math.abs(n) >= 10) return n.toFixed(1);
  return n.toFixed(2);
}

export function formatFigure(f: Figure): string {
  const verdict = met(f);
  const target = f.target ? ` (target ${f.target.better === 'lower' ? '<=' : '>='} ${f.target.ratio}x: ${verdict ? 'met' : 'MISSED'})` : '';
  const notes = f.notes ? `; ${f.notes}` : '';
  return `${f.name}: ${num(f.value)} ${f.unit} vs ${f.baselineName} ${num(f.baseline)} ${f.unit} = ${f.ratio.toFixed(2)}x${target}${notes}`;
}

export function printFigures(figures: Figure[]): void {
  for (const f of figures) console.log(formatFigure(f));
}

// ---------------------------------------------------------------------------------------------
// The machine

/** The machine a run measured on, as `npm run bench -- --save` records it (bench/run-record.ts). */
export interface MachineInfo {
  cpu: string | null;
  cores: number | null;
  memoryGiB: number | null;
  os: string | null;
  node: string | null;
  postgres: string | null;
  redis: string | null;
  /** What else is known of it (a converted run's speed, the processes that shared its cores). */
  note?: string;
}

export async function machineInfo(db: Queryable, withRedis = true): Promise<MachineInfo> {
  const { rows } = await db.query<{ v: string }>("select current_setting('server_version') as v");
  let redis: string | null = null;
  if (withRedis) {
    const client = new Redis(redisUrl(), { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
    try {
      await client.connect();
      redis = /redis_version:(\S+)/.exec(await client.info('server'))?.[1] ?? null;
    } catch {
      redis = null;
    } finally {
      client.disconnect();
    }
  }
  const cpu = cpus();
  return {
    cpu: cpu[0]?.model.trim() || null,
    cores: cpu.length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os: `${type()} ${release()} ${arch()}`,
    node: process.version,
    postgres: rows[0]!.v,
    redis,
  };
}

export async function machineLine(db: Queryable, withRedis = true): Promise<string> {
  const m = await machineInfo(db, withRedis);
  const redis = withRedis ? (m.redis ?? 'unreachable') : 'n/a';
  return `machine: ${m.cores} cores (${m.cpu ?? 'unknown'}), ${m.memoryGiB?.toFixed(1)} GiB, Node ${m.node}, Postgres ${m.postgres}, Redis ${redis}`;
}

export interface Queryable {
  query<R>(text: string, params?: unknown[]): Promise<{ rows: R[] }>;
}

// ---------------------------------------------------------------------------------------------
// The database

export interface BenchDatabase {
  name: string;
  url: string;
  db: Database;
  /** The most connections open to it at once so far (every process's, LISTEN included), sampled every 250 ms. */
  peakConnections(): number;
  /** Closes the pool and drops the database. Idempotent. */
  drop(): Promise<void>;
}

export function databaseUrl(name: string, server = serverUrl()): string {
  const url = new URL(server);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function adminQuery<R = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: serverUrl() });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as R[];
  } finally {
    await client.end();
  }
}

/** A fresh database `refsync_bench_<hex>` on DATABASE_URL's server, migrated, dropped by drop(). */
export async function createBenchDatabase(options: { poolSize?: number; prefix?: string } = {}): Promise<BenchDatabase> {
  const name = `${options.prefix ?? 'refsync_bench'}_${randomBytes(5).toString('hex')}`;
  await adminQuery(`create database ${name}`);
  const url = databaseUrl(name);
  let db: Database | undefined;
  try {
    db = await openDatabase({ url, poolSize: Math.max(2, options.poolSize ?? 10), applicationName: 'refsync-bench' });
    await migrateDatabase(db);
  } catch (err) {
    await db?.close().catch(() => undefined);
    await adminQuery(`drop database if exists ${name} with (force)`);
    throw err;
  }
  const opened = db;
  const sampler = await sampleConnections(name);
  let dropped = false;
  return {
    name,
    url,
    db: opened,
    peakConnections: sampler.peak,
    async drop() {
      if (dropped) return;
      dropped = true;
      await sampler.stop();
      await opened.close().catch(() => undefined);
      await adminQuery(`drop database if exists ${name} with (force)`);
    },
  };
}

/**
 * Samples the connections open to database `name` on one session of the server's own (one short
 * query every 250 ms): a benchmark's budget of Postgres connections, seen from the server. Client
 * backends only: a parallel query's workers are processes of the backend that started them, not
 * connections anyone opened (P5's scan of its fact table counted two more).
 */
async function sampleConnections(name: string): Promise<{ peak(): number; stop(): Promise<void> }> {
  const client = new pg.Client({ connectionString: serverUrl() });
  client.on('error', () => undefined);
  await client.connect();
  let peak = 0;
  let sampling: Promise<unknown> = Promise.resolve();
  const sample = () => {
    sampling = client
      .query<{ n: number }>("select count(*)::int as n from pg_stat_activity where datname = $1 and backend_type = 'client backend'", [name])
      .then(({ rows }) => (peak = Math.max(peak, rows[0]!.n)))
      .catch(() => undefined);
  };
  sample();
  const timer = setInterval(sample, 250);
  return {
    peak: () => peak,
    async stop() {
      clearInterval(timer);
      await sampling;
      await client.end().catch(() => undefined);
    },
  };
}

/** The figures with the bench database's peak connections added to their notes (every figure says what it held). */
export function withConnections(bench: Pick<BenchDatabase, 'peakConnections'>, figures: Figure[]): Figure[] {
  const held = `${bench.peakConnections()} Postgres connections at most`;
  return figures.map((f) => ({ ...f, notes: f.notes ? `${f.notes}; ${held}` : held }));
}

// ---------------------------------------------------------------------------------------------
// The sandbox

/** What a benchmark needs of the sandbox, whether it runs in this process or in a child. */
export interface BenchSandbox {
  url: string;
  caFile: string;
  /** Calls a control method (as `POST /__sandbox/<name>`), returns its result. */
  control<T = unknown>(name: string, body?: Record<string, unknown>): Promise<T>;
  requestLog(): Promise<RequestLogEntry[]>;
  close(): Promise<void>;
}

export interface SandboxStartOptions {
  latencyMs?: number;
  /** Run the sandbox inside this process (the smoke tests do); default: a child process. */
  inProcess?: boolean;
}

const here = fileURLToPath(new URL('.', import.meta.url));

function inProcessSandbox(sb: Sandbox): BenchSandbox {
  const methods = sb.control as unknown as Record<string, (...args: unknown[]) => unknown>;
  return {
    url: sb.url,
    caFile: sb.caFile,
    async control<T>(name: string, body: Record<string, unknown> = {}): Promise<T> {
      // The same argument shapes as the HTTP control API, mapped onto the in-process methods.
      const list = body.listKey ?? body.list;
      switch (name) {
        case 'setLatency':
          return methods.setLatency!(body.ms) as T;
        case 'setGenerated':
          return methods.setGenerated!(list, body.count) as T;
        case 'changeGenerated':
          return methods.changeGenerated!(list, { everyNth: body.everyNth }) as T;
        case 'setPaging':
          return methods.setPaging!(list, body.shape, body.opts ?? {}) as T;
        case 'resetRequestLog':
        case 'requestLog':
        case 'state':
        case 'reset':
          return methods[name]!() as T;
        default:
          throw new Error(`bench sandbox: control '${name}' is not mapped in process`);
      }
    },
    requestLog: async () => sb.control.requestLog(),
    close: () => sb.close(),
  };
}

/** Starts the sandbox: a child process (`bench/sandbox-child.ts`) unless inProcess. */
export async function startBenchSandbox(options: SandboxStartOptions = {}): Promise<BenchSandbox> {
  if (options.inProcess) return inProcessSandbox(await startSandbox({ latencyMs: options.latencyMs ?? 0 }));
  const child: ChildProcess = spawn(process.execPath, [`${here}sandbox-child.ts`, String(options.latencyMs ?? 0)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const first = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`sandbox child exited with ${code} before it was ready`)));
  });
  const info = JSON.parse(first) as { url: string; caFile: string; caPem: string; controlSecret: string };
  const agent = new Agent({ connect: { ca: info.caPem } });
  const control = async <T>(name: string, body: Record<string, unknown> = {}): Promise<T> => {
    const res = await request(`${info.url}/__sandbox/${name}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-sandbox-control': info.controlSecret },
      body: JSON.stringify(body),
      dispatcher: agent,
    });
    const answer = (await res.body.json()) as { result?: T; detail?: string };
    if (res.statusCode !== 200) throw new Error(`sandbox ${name}: ${res.statusCode} ${answer.detail ?? ''}`);
    return answer.result as T;
  };
  let closing: Promise<void> | undefined;
  return {
    url: info.url,
    caFile: info.caFile,
    control,
    requestLog: () => control<RequestLogEntry[]>('requestLog'),
    close() {
      closing ??= (async () => {
        await agent.close().catch(() => undefined);
        if (child.exitCode !== null) return;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      })();
      return closing;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Sources

/** The environment a user would set for this sandbox (machine account, its CA). */
export function sandboxEnv(sb: Pick<BenchSandbox, 'url' | 'caFile'>, extra: Record<string, string> = {}): Record<string, string> {
  return {
    REFSYNC_BASE_URL: sb.url,
    REFSYNC_EMAIL: SANDBOX_MACHINE_ACCOUNT.email,
    REFSYNC_PASSWORD: SANDBOX_MACHINE_ACCOUNT.password,
    REFSYNC_CA_FILE: sb.caFile,
    REFSYNC_ENVIRONMENT: 'bench',
    LOG_LEVEL: 'warn',
    ...extra,
  };
}

/**
 * Writes a REFSYNC_CONFIG file of one source per environment, each the sandbox's machine account
 * (the base URL and CA come from sandboxEnv), and returns its path.
 */
export async function writeSourcesConfig(dir: string, environments: readonly string[]): Promise<string> {
  const file = join(dir, 'sources.json');
  const sources = environments.map((environment) => ({ environment, email: SANDBOX_MACHINE_ACCOUNT.email, password: SANDBOX_MACHINE_ACCOUNT.password }));
  await writeFile(file, JSON.stringify({ sources }));
  return file;
}

export function benchSource(sb: Pick<BenchSandbox, 'url' | 'caFile'>, extra: Record<string, string> = {}): SourceConfig {
  return loadConfig(sandboxEnv(sb, extra)).sources[0]!;
}

// ---------------------------------------------------------------------------------------------
// Small helpers

export function ms(since: number): number {
  return performance.now() - since;
}

export async function countRows(db: Queryable, table: string, where = 'true', params: unknown[] = []): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from refdata.${table} where ${where}`, params);
  return rows[0]!.n;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Runs a script's main when the file is executed directly, printing errors without a stack. */
/** A bad argument to a bench script: one line, exit 2, no stack. */
export class BenchUsageError extends Error {}

export function runMain(main: () => Promise<unknown>): void {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      if (err instanceof BenchUsageError) {
        console.error(`bench: ${err.message}`);
        process.exit(2);
      }
      console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
      process.exit(1);
    },
  );
}

// ---------------------------------------------------------------------------------------------
// A sync in a child process

/**
 * `nodeArgs`, BENCH_CPU_PROF's --cpu-prof and BENCH_NODE_ARGS: for every child a bench measures.
 * The children add refsync's own heap flags as `refsync sync` and `refsync worker` do (they restart
 * with them: src/memory/heap-flags.ts), except one that BENCH_NODE_ARGS sets itself.
 */
export function benchChildFlags(nodeArgs: string[] = []): string[] {
  const args = [...nodeArgs];
  if (process.env.BENCH_CPU_PROF) args.push('--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`);
  args.push(...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean));
  return args;
}

/**
 * Runs `bench/sync-child.ts` with the job and returns its result line. `nodeArgs` go before the
 * script (e.g. `--cpu-prof`); BENCH_CPU_PROF=<dir> profiles every such child into that folder, and
 * BENCH_NODE_ARGS (space-separated) adds V8 or Node flags to every such child, to try heap settings.
 */
export async function runSyncChild<R>(job: unknown, nodeArgs: string[] = []): Promise<R> {
  const args = benchChildFlags(nodeArgs);
  const child = spawn(process.execPath, [...args, `${here}sync-child.ts`, JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    out += chunk;
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`sync child exited with ${code}`);
  // The result is the last line that is a JSON object. What else the child printed goes to stderr:
  // BENCH_NODE_ARGS=--trace-gc writes to stdout, also after the result, as the child exits.
  const lines = out.trim().split('\n');
  const at = lines.findLastIndex((l) => l.startsWith('{'));
  const others = lines.filter((_, i) => i !== at);
  if (others.length) process.stderr.write(`${others.join('\n')}\n`);
  if (at === -1) throw new Error('sync child printed no result');
  return JSON.parse(lines[at]!) as R;
}
