// Servers the fault cases start and stop themselves: a private Postgres (initdb in a temp folder,
// a free port; the shared one at 5432 is never touched) and a TCP proxy that can cut every
// connection to a server and refuse new ones, then come back on the same port.
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { migrateDatabase } from '../../src/columns/migrate-views.ts';
import { hasExited, killProcess, onFreePort, spawnCli, waitFor, type CliProcess } from '../queue/helpers.ts';

const run = promisify(execFile);
const PG_BIN = '/usr/lib/postgresql/15/bin';
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => undefined);
});

export interface PrivatePostgres {
  /** postgres:// URL of its migrated `refsync` database. */
  url: string;
  port: number;
  /** pg_ctl restart -m fast: every session is ended, the server is back when this resolves. */
  restart(): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
}

function asPostgres(cmd: string, args: string[]) {
  return run('runuser', ['-u', 'postgres', '--', cmd, ...args], { timeout: 60_000 });
}

export interface PrivatePostgresOptions {
  /** Serve TLS with this certificate and key (PEM); plain connections are still accepted. */
  tls?: { certPem: string; keyPem: string };
  /** Server settings given as `-c name=value` (a small `max_connections`, say). */
  settings?: Record<string, string | number>;
  /** false: the `refsync` database is created empty, for a test to migrate as a role of its own. */
  migrate?: boolean;
}

/** Whether a private Postgres can be started here (Debian's server binaries, and root to run them as postgres). */
export const canStartPrivatePostgres = existsSync(`${PG_BIN}/initdb`) && process.getuid?.() === 0;

/** initdb + start on a free port (trust auth, no fsync), then a database `refsync`, migrated unless asked not to. */
export async function startPrivatePostgres(options: PrivatePostgresOptions = {}): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'refsync-faults-pg-'));
  chownSync(dir, uidOf('postgres'), gidOf('postgres'));
  const data = join(dir, 'data');
  await asPostgres(`${PG_BIN}/initdb`, ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  let opts = ` -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  if (options.tls) {
    // Postgres refuses a key file others can read; it must belong to the server's user.
    for (const [file, pem] of [
      ['server.crt', options.tls.certPem],
      ['server.key', options.tls.keyPem],
    ] as const) {
      writeFileSync(join(dir, file), pem, { mode: 0o600 });
      chownSync(join(dir, file), uidOf('postgres'), gidOf('postgres'));
    }
    opts += ` -c ssl=on -c ssl_cert_file=${join(dir, 'server.crt')} -c ssl_key_file=${join(dir, 'server.key')}`;
  }
  for (const [name, value] of Object.entries(options.settings ?? {})) opts += ` -c ${name}=${value}`;
  const log = join(dir, 'log');
  const ctlOn =
    (port: number) =>
    (action: string, extra: string[] = []) =>
      asPostgres(`${PG_BIN}/pg_ctl`, ['-D', data, '-o', `-p ${port}${opts}`, '-l', log, '-w', '-t', '30', ...extra, action]);
  // Started again on another port when it cannot bind the one freePort saw free a moment before.
  const port = await onFreePort('postgres', async (port) => {
    const logged = existsSync(log) ? readFileSync(log, 'utf8').length : 0;
    try {
      await ctlOn(port)('start');
      return port;
    } catch (err) {
      if (/could not bind|already in use/.test(readFileSync(log, 'utf8').slice(logged))) return undefined;
      throw err;
    }
  });
  const ctl = ctlOn(port);
  let running = true;
  cleanups.push(async () => {
    if (running) await ctl('stop', ['-m', 'immediate']).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });
  const admin = await openDatabase({ url: `postgres://postgres@127.0.0.1:${port}/postgres`, poolSize: 1 });
  await admin.query('create database refsync');
  await admin.close();
  const url = `postgres://postgres@127.0.0.1:${port}/refsync`;
  if (options.migrate !== false) {
    const db = await openDatabase({ url, poolSize: 2 }); // migrate holds one connection for its lock
    await migrateDatabase(db);
    await db.close();
  }
  return {
    url,
    port,
    restart: async () => {
      await ctl('restart', ['-m', 'fast']);
    },
    stop: async () => {
      await ctl('stop', ['-m', 'fast']);
      running = false;
    },
    start: async () => {
      await ctl('start');
      running = true;
    },
  };
}

/** uid or gid of a user (node has no getpwnam; `id` answers it). */
export function idOf(flag: '-u' | '-g', user: string): number {
  return Number(execFileSync('id', [flag, user], { encoding: 'utf8' }).trim());
}
export const uidOf = (u: string) => idOf('-u', u);
export const gidOf = (u: string) => idOf('-g', u);

export interface TcpProxy {
  /** The target URL with host and port replaced by the proxy's. */
  url: string;
  port: number;
  /** Connections accepted so far. */
  accepted(): number;
  /** Destroys every proxied connection and stops listening: new connections are refused. */
  cut(): Promise<void>;
  /** Listens again on the same port. */
  restore(): Promise<void>;
}

/** A TCP proxy in front of the server of `targetUrl`. */
export async function startTcpProxy(targetUrl: string): Promise<TcpProxy> {
  const target = new URL(targetUrl);
  const targetPort = Number(target.port || 5432);
  const sockets = new Set<Socket>();
  let accepted = 0;
  let server: Server | undefined;
  const listen = async (port: number) => {
    const s = createServer((client) => {
      accepted++;
      const upstream = connect(targetPort, target.hostname);
      for (const sock of [client, upstream]) {
        sockets.add(sock);
        sock.on('close', () => sockets.delete(sock));
        sock.on('error', () => undefined);
      }
      client.pipe(upstream);
      upstream.pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve());
    });
    server = s;
  };
  const cut = async () => {
    const s = server;
    server = undefined;
    for (const sock of sockets) sock.destroy();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  // Listens on another port when the one freePort saw free was taken a moment after.
  const port = await onFreePort('the TCP proxy', async (port) => {
    try {
      await listen(port);
      return port;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') return undefined;
      throw err;
    }
  });
  cleanups.push(cut);
  const url = new URL(targetUrl);
  url.host = `127.0.0.1:${port}`;
  return { url: url.toString(), port, accepted: () => accepted, cut, restore: () => listen(port) };
}

/** A `refsync worker` child process (see startWorkerProcess). */
export interface WorkerProcess extends CliProcess {
  pid: number;
  /** Its health/metrics server, from the line it prints once started. */
  httpUrl: string;
  /** SIGTERM, and the exit code once it has stopped (SIGKILL after 60 s). */
  stop(): Promise<number | null>;
  /** SIGKILL, resolved once the process is gone. */
  kill(): Promise<void>;
}

/**
 * Starts `node bin/refsync.js worker` with exactly this environment and waits (up to 60 s: a loaded
 * machine starts node slowly) until it serves; killed after the file if still running.
 */
export async function startWorkerProcess(env: Record<string, string>): Promise<WorkerProcess> {
  const proc = spawnCli(['worker'], { REFSYNC_HTTP_PORT: '0', ...env });
  let exitedEarly = false;
  void proc.exited.then(() => (exitedEarly = true));
  const line = await waitFor(
    () => {
      if (exitedEarly) throw new Error(`the worker exited before serving: ${proc.output().stderr.slice(0, 500)}`);
      return /serving (http:\/\/\S+)/.exec(proc.output().stdout)?.[1];
    },
    'the worker process to serve',
    60_000,
    50,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; stderr: ${proc.output().stderr.slice(0, 500)}`);
  });
  const pid = proc.child.pid!;
  return {
    ...proc,
    pid,
    httpUrl: line,
    async stop() {
      if (hasExited(proc.child)) return proc.child.exitCode;
      const timer = setTimeout(() => proc.child.kill('SIGKILL'), 60_000);
      proc.child.kill('SIGTERM');
      const code = await proc.exited;
      clearTimeout(timer);
      return code;
    },
    kill: () => killProcess(proc.child),
  };
}
