// PgBouncer in transaction pooling mode, in front of the test Postgres: how managed services
// (PgBouncer, Supabase, Neon, RDS Proxy, pgcat) are often reached. Started per test file on a free
// port from a config in a temp folder; it accepts no startup parameter beyond the basics
// (ignore_startup_parameters is empty), so anything refsync sends at connect shows at once.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gidOf, uidOf } from '../faults/servers.ts';
import { onFreePort, waitFor } from '../queue/helpers.ts';

export interface PgBouncer {
  port: number;
  /** The given Postgres URL with its host and port replaced by the bouncer's. */
  urlFor(postgresUrl: string): string;
  stop(): Promise<void>;
}

/** Whether the `pgbouncer` binary is installed (.ci/run installs Debian's package). */
export function pgbouncerInstalled(): boolean {
  try {
    execFileSync('pgbouncer', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Starts PgBouncer (transaction mode, trust auth) in front of the Postgres of `postgresUrl`. */
export async function startPgBouncer(postgresUrl: string): Promise<PgBouncer> {
  const target = new URL(postgresUrl);
  const user = decodeURIComponent(target.username || 'postgres');
  const dir = mkdtempSync(join(tmpdir(), 'refsync-pgbouncer-'));
  // PgBouncer refuses to run as root: as root, it runs as the postgres user, who must read the folder.
  chmodSync(dir, 0o777);
  // Started again on another port when it exits at start (its port taken since freePort saw it free).
  const { port, child, exited } = await onFreePort('pgbouncer', async (port) => {
    writeFileSync(join(dir, 'userlist.txt'), `"${user}" ""\n`);
    writeFileSync(
      join(dir, 'pgbouncer.ini'),
      [
        '[databases]',
        `* = host=${target.hostname} port=${target.port || 5432}`,
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${port}`,
        'unix_socket_dir =',
        'auth_type = trust',
        `auth_file = ${join(dir, 'userlist.txt')}`,
        'pool_mode = transaction',
        // Server connections taken in turn, not the last used first: session state carried from one
        // transaction to the next shows at once instead of by chance.
        'server_round_robin = 1',
        'default_pool_size = 8',
        'max_client_conn = 500',
        'ignore_startup_parameters =',
        `logfile = ${join(dir, 'pgbouncer.log')}`,
        `pidfile = ${join(dir, `pgbouncer-${port}.pid`)}`,
        '',
      ].join('\n'),
    );
    const asRoot = process.getuid?.() === 0;
    const child: ChildProcess = spawn('pgbouncer', [join(dir, 'pgbouncer.ini')], {
      stdio: 'ignore',
      ...(asRoot ? { uid: uidOf('postgres'), gid: gidOf('postgres') } : {}),
    });
    let exited = false;
    child.once('exit', () => (exited = true));
    await waitFor(
      () => {
        if (exited) return true;
        return new Promise<boolean>((resolve) => {
          const s = connect(port, '127.0.0.1', () => {
            s.destroy();
            resolve(true);
          });
          s.once('error', () => resolve(false));
        });
      },
      'pgbouncer to listen',
      15_000,
      50,
    );
    return exited ? undefined : { port, child, exited: () => exited };
  });
  return {
    port,
    urlFor(postgresUrl) {
      const url = new URL(postgresUrl);
      url.host = `127.0.0.1:${port}`;
      return url.toString();
    },
    async stop() {
      if (!exited()) {
        const gone = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGINT');
        await gone;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
