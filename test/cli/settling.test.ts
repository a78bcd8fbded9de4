import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { refsyncBin, runCli, type CliResult } from '../helpers/cli.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { sandboxEnv } from '../helpers/source.ts';
import { testTempDir } from '../helpers/temp-dir.ts';

// Exit 0 only when the command did its work: every command's failure modes end non-zero, and a
// command whose work waits on something that never settles fails instead of ending quietly.

const t = useTestDatabase();
let sb: Sandbox;
let env: Record<string, string>;
const dir = testTempDir('refsync-settling');

beforeAll(async () => {
  sb = await useSandbox();
  env = sandboxEnv(sb, { DATABASE_URL: t.url, LOG_LEVEL: 'error' });
});

const droppedRequests = fileURLToPath(new URL('fixtures/dropped-requests.ts', import.meta.url));

/** `refsync ...` with every upstream request dropped unanswered (see fixtures/dropped-requests.ts). */
function runWithDroppedRequests(args: string[], childEnv: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', droppedRequests, refsyncBin, ...args], {
      env: { PATH: process.env.PATH ?? '', ...childEnv },
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const [stdoutBytes, stderrBytes] = [Buffer.concat(out), Buffer.concat(err)];
      resolve({ code, stdout: stdoutBytes.toString(), stderr: stderrBytes.toString(), stdoutBytes, stderrBytes });
    });
  });
}

describe('a command whose work never settles', () => {
  it('check-auth exits 1 with one line naming it', async () => {
    const res = await runWithDroppedRequests(['check-auth'], env);
    expect(res.stderr).toBe(
      `refsync: check-auth: ended without finishing its work (it was waiting on something that never came); nothing was reported as done\n`,
    );
    expect(res.code).toBe(1);
  });
});

const unreachableDatabase = 'postgres://nobody@127.0.0.1:1/none';
const crlfKey = { REFSYNC_EMAIL: '', REFSYNC_PASSWORD: '', REFSYNC_API_KEY: 'abc\r\nX' };

/** [case, arguments, environment over the sandbox's, exit code]. Exit 0 rows are followed by a check of their work. */
const cases: Array<[string, string[], Record<string, string>, number]> = [
  ['check-auth: the service knows the credential', ['check-auth'], {}, 0],
  ['check-auth: wrong password', ['check-auth'], { REFSYNC_PASSWORD: 'wrong' }, 1],
  ['check-auth: service unreachable', ['check-auth'], { REFSYNC_BASE_URL: 'https://127.0.0.1:1' }, 1],
  ['check-auth: API key holding CR LF', ['check-auth'], crlfKey, 2],
  ['migrate: database reachable', ['migrate'], {}, 0],
  ['migrate: database unreachable', ['migrate'], { DATABASE_URL: unreachableDatabase }, 1],
  ['sync: one list synced', ['sync', '--list', 'shipment_modes'], {}, 0],
  ['sync: service unreachable', ['sync', '--list', 'shipment_modes'], { REFSYNC_BASE_URL: 'https://127.0.0.1:1' }, 1],
  ['sync: API key holding CR LF', ['sync', '--list', 'shipment_modes'], crlfKey, 2],
  ['sync: database unreachable', ['sync', '--list', 'shipment_modes'], { DATABASE_URL: unreachableDatabase }, 1],
  ['status: database reachable', ['status'], {}, 0],
  ['status: database unreachable', ['status'], { DATABASE_URL: unreachableDatabase }, 1],
  ['changes: database reachable', ['changes'], {}, 0],
  ['changes: database unreachable', ['changes'], { DATABASE_URL: unreachableDatabase }, 1],
  ['alerts: database unreachable', ['alerts'], { DATABASE_URL: unreachableDatabase }, 1],
  ['alerts retry: no such alert', ['alerts', 'retry', '999999'], {}, 2],
  ['versions diff: database unreachable', ['versions', 'diff', '2024-06-11', '2025-09-01'], { DATABASE_URL: unreachableDatabase }, 1],
  ['impact orphans: no usage column configured', ['impact', 'orphans'], {}, 2],
  ['prune: database unreachable', ['prune'], { DATABASE_URL: unreachableDatabase }, 1],
  ['worker: database unreachable', ['worker'], { DATABASE_URL: unreachableDatabase, REFSYNC_HTTP_PORT: '0' }, 1],
  ['trigger: Redis unreachable', ['trigger', '--list', 'shipment_modes'], { REDIS_URL: 'redis://127.0.0.1:1' }, 1],
  ['export-dbt: into a folder that does not exist', ['export-dbt', '--out', join(dir, 'missing', 'sources.yml')], {}, 1],
  ['an unknown command', ['frobnicate'], {}, 2],
];

describe('exit codes over the commands and their failure modes', () => {
  it.each(cases.map(([name, args, extra, code]) => ({ name, args, extra, code })))('$name: exit $code', async ({ args, extra, code }) => {
    const res = await runCli(args, { env: { ...env, ...extra }, cwd: dir });
    expect(res.code, res.stderr).toBe(code);
    if (code !== 0) expect(`${res.stderr}${res.stdout}`.trim()).not.toBe(''); // and says why
    expect(res.stderr).not.toContain('abc');
  });

  it('the exit-0 rows did their work', async () => {
    const { rows } = await t.db.query("select status from refdata.snapshots where list_key = 'shipment_modes' order by id");
    expect(rows.map((r) => r.status)).toContain('ok');
  });
});
