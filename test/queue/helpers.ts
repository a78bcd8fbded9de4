// Shared by the worker tests: a worker service per test (closed after the file), a config pointing
// at a sandbox, a Redis server of the test's own, and bounded polling.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, inject } from 'vitest';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { AppConfig } from '../../src/config/types.ts';
import { loadConfig } from '../../src/config/load.ts';
import { startWorkerService, type WorkerService, type WorkerServiceOptions } from '../../src/queue/worker/service.ts';
import { QUEUE_NAME } from '../../src/queue/redis/names.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { sandboxEnv } from '../helpers/source.ts';
import { testTempDir } from '../helpers/temp-dir.ts';

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => undefined);
});

/** Runs fn after the test file (in reverse order of registration). */
export function onCleanup(fn: () => Promise<unknown>): void {
  cleanups.push(fn);
}

/** The configuration a user would give to point a worker at this sandbox, Postgres and Redis. */
export function workerConfig(sandbox: Sandbox, databaseUrl: string, extra: Record<string, string> = {}): AppConfig {
  return loadConfig({
    ...sandboxEnv(sandbox),
    DATABASE_URL: databaseUrl,
    REDIS_URL: inject('redisUrl'),
    REFSYNC_HTTP_PORT: '0',
    ...extra,
  });
}

/** Starts a worker in process with short retries; closed after the file unless closed before. */
export async function startTestWorker(config: AppConfig, prefix: string, options: Partial<WorkerServiceOptions> = {}): Promise<WorkerService> {
  const service = await startWorkerService(config, {
    logger: silentLogger,
    prefix,
    policy: { attempts: 3, backoffMs: 200 },
    clientOptions: { retry: { attempts: 2, baseDelayMs: 50, maxDelayMs: 200 } },
    alerts: false,
    ...options,
  });
  onCleanup(() => service.close());
  forgetQueueAfterwards(prefix, config.redisUrl);
  return service;
}

/**
 * A Redis key prefix of the test file's own, so queues never collide across files; its keys in the
 * suite's Redis are deleted after the file, whatever wrote them (a worker, a `refsync status`).
 */
export function testQueuePrefix(): string {
  const prefix = `refsync-test-${randomBytes(4).toString('hex')}`;
  forgetQueueAfterwards(prefix, inject('redisUrl'));
  return prefix;
}

const forgotten = new Set<string>();

/** Deletes the prefix's keys after the file (registered first, so it runs after the workers close). */
function forgetQueueAfterwards(prefix: string, redisUrl: string): void {
  const key = `${redisUrl} ${prefix}`;
  if (forgotten.has(key)) return;
  forgotten.add(key);
  cleanups.unshift(() =>
    withPrefixKeys(prefix, redisUrl, async (redis, keys) => {
      for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
    }),
  );
}

/** The keys a queue prefix has in Redis now. */
export function queueKeys(prefix: string, redisUrl = inject('redisUrl')): Promise<string[]> {
  return withPrefixKeys(prefix, redisUrl, async (_redis, keys) => keys);
}

/** Runs `use` with a client of its own and the prefix's keys, then disconnects. */
async function withPrefixKeys<T>(prefix: string, redisUrl: string, use: (redis: Redis, keys: string[]) => Promise<T>): Promise<T> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    const keys: string[] = [];
    for await (const batch of redis.scanStream({ match: `${prefix}:*`, count: 500 })) keys.push(...(batch as string[]));
    return await use(redis, keys);
  } finally {
    redis.disconnect();
  }
}

/** A producer-side queue handle for assertions (closed after the file). */
export function testQueue(prefix: string, redisUrl = inject('redisUrl')): Queue {
  const queue = new Queue(QUEUE_NAME, { connection: { url: redisUrl }, prefix });
  queue.on('error', () => undefined);
  onCleanup(() => queue.close());
  forgetQueueAfterwards(prefix, redisUrl);
  return queue;
}

/** Polls fn until it returns a truthy value; fails with the last value after timeoutMs. */
export type Truthy<T> = Exclude<T, false | null | undefined | 0 | ''>;

export async function waitFor<T>(fn: () => Promise<T> | T, what: string, timeoutMs = 20_000, intervalMs = 100): Promise<Truthy<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      last = await fn();
      if (last) return last as Truthy<T>;
    } catch (err) {
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)}${lastError ? `, error: ${(lastError as Error).message}` : ''})`);
}

/**
 * A job's return value, once BullMQ has stored it. A run's row in Postgres says "succeeded" before
 * the job that closed it returns, so a test that waited for the row must still wait for the job.
 */
export function jobReturn(queue: Queue, jobId: string, timeoutMs?: number): Promise<Record<string, unknown>> {
  return waitFor(async () => (await queue.getJob(jobId))?.returnvalue as Record<string, unknown> | undefined, `job ${jobId} to return`, timeoutMs);
}

/** The first port the kernel takes for outgoing connections and for listen(0): Linux's ip_local_port_range, else its default. */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (low) return low;
  } catch {
    // Not Linux: its default below.
  }
  return 32768;
}

/** Listens on `port` (0: any) of 127.0.0.1 and closes again: the port, or undefined when it is taken. */
function tryListen(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => {
      const bound = (server.address() as { port: number }).port;
      server.close(() => resolve(bound));
    });
  });
}

/**
 * A port free now, for a server a test starts, and may stop and start again on the same port. Taken
 * below the kernel's ephemeral range where there is room (from 10000 to 10000 below the range, so
 * that a Redis cluster node's bus port, its port + 10000, is below it too): no outgoing connection
 * of the test run and no listen(0) takes such a port while its server is down or not yet bound,
 * which a port of listen(0) allowed (a CI run timed out waiting for a redis-server that had not
 * bound its port). Another test may still pick the same one first: onFreePort starts a server
 * again on another port then.
 */
export async function freePort(): Promise<number> {
  const top = ephemeralLow() - 10_000;
  for (let attempt = 0; top > 11_000 && attempt < 20; attempt++) {
    const port = await tryListen(10_000 + Math.floor(Math.random() * (top - 10_000)));
    if (port !== undefined) return port;
  }
  const port = await tryListen(0);
  if (port === undefined) throw new Error('no free port on 127.0.0.1');
  return port;
}

export interface RedisServer {
  url: string;
  port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
}

/**
 * redis-server with `args` on `port`, resolved with the process once it is ready to accept
 * connections, or with undefined when it exited first (its port taken: freePort only saw the port
 * free a moment before). The process is killed after the file.
 */
export async function spawnRedisServer(port: number, args: string[]): Promise<ChildProcess | undefined> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  onCleanup(() => killProcess(child));
  await waitFor(() => out.includes('Ready to accept connections') || hasExited(child), `redis-server on ${port}`, 10_000, 50);
  return hasExited(child) ? undefined : child;
}

/** Whether a child process has ended, by an exit or a signal. */
export function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** SIGKILL, resolved once the process is gone. */
export async function killProcess(child: ChildProcess): Promise<void> {
  if (hasExited(child)) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/**
 * Starts a server on a free port. Another test may take the port between freePort and the server's
 * bind, so a server whose start answers undefined (it could not listen) is started again on another
 * port, up to five times.
 */
export async function onFreePort<T>(what: string, start: (port: number) => Promise<T | undefined>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const started = await start(port);
    if (started !== undefined) return started;
    if (attempt === 5) throw new Error(`${what} could not start, 5 times (last port ${port})`);
  }
}

/** redis-server on a free port (see onFreePort); `args` may name more ports it takes. */
export function startRedisOnFreePort(args: (port: number) => string[] | Promise<string[]>): Promise<{ port: number; child: ChildProcess }> {
  return onFreePort('redis-server', async (port) => {
    const child = await spawnRedisServer(port, await args(port));
    return child && { port, child };
  });
}

/**
 * A redis-server of the test's own (no persistence), on a free port; stopped after the file.
 * `extraArgs` may be a function of the port, to take more ports of its own on each try.
 */
export async function startRedisServer(extraArgs: string[] | ((port: number) => Promise<string[]>) = []): Promise<RedisServer> {
  let args: string[] = [];
  const first = await startRedisOnFreePort(async (port) => (args = typeof extraArgs === 'function' ? await extraArgs(port) : extraArgs));
  const port = first.port;
  let child: ChildProcess | undefined = first.child;
  const start = async () => {
    // Started again on its own port, which clients already know: a server that cannot bind it fails the test.
    child = await spawnRedisServer(port, args);
    if (!child) throw new Error(`redis-server could not start again on ${port}`);
  };
  const stop = async () => {
    const c = child;
    child = undefined;
    if (c) await killProcess(c);
  };
  return { url: `redis://127.0.0.1:${port}`, port, stop, start };
}

export const repoRoot = new URL('../../', import.meta.url).pathname;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

// An empty working directory, so no developer's .env leaks into the CLI under test.
const cliCwd = testTempDir('refsync-cli');

export interface CliProcess {
  child: ChildProcess;
  output(): { stdout: string; stderr: string };
  exited: Promise<number | null>;
}

/** Starts `node bin/refsync.js ...args` with exactly this environment (plus PATH and HOME). */
export function spawnCli(args: string[], env: Record<string, string>): CliProcess {
  const child = spawn(process.execPath, [join(repoRoot, 'bin/refsync.js'), ...args], {
    cwd: cliCwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  onCleanup(async () => {
    if (!hasExited(child)) child.kill('SIGKILL');
    await exited;
  });
  return { child, output: () => ({ stdout, stderr }), exited };
}

/** Runs `node bin/refsync.js ...args` to the end. */
export async function runCli(args: string[], env: Record<string, string>, timeoutMs = 30_000): Promise<CliResult> {
  const proc = spawnCli(args, env);
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), timeoutMs);
  const code = await proc.exited;
  clearTimeout(timer);
  return { code, ...proc.output() };
}
