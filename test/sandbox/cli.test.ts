import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';
import { testTempDir } from '../helpers/temp-dir.ts';

const bin = fileURLToPath(new URL('../../bin/refsync.js', import.meta.url));

/** Each start in a folder of its own (its ./.refsync/sandbox), so test files never share one. */
function startCli(args: string[], cwd = testTempDir('refsync-sandbox-cli')) {
  const child = spawn(process.execPath, [bin, 'sandbox', ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LOG_LEVEL: 'warn' } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const output = () => ({ stdout, stderr });
  return { child, exited, output };
}

async function waitFor(check: () => boolean, ms = 15_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out waiting for the sandbox CLI');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('refsync sandbox (CLI)', () => {
  it('prints the URL, the CA file, the accounts, the secret and a curl line; serves; stops on SIGTERM', async () => {
    const cli = startCli(['--port', '0', '--nmfc-count', '1234', '--control-secret', 'cli-secret']);
    try {
      await waitFor(() => /stop with Ctrl-C/.test(cli.output().stdout));
      const out = cli.output().stdout;
      const url = /listening on (https:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
      const caFile = /CA certificate: (\S+)/.exec(out)?.[1];
      expect(url).toBeDefined();
      expect(caFile).toBeDefined();
      expect(out).toContain('machine@sandbox.test / sandbox-password');
      expect(out).toContain('keyed@sandbox.test / keyed-password');
      expect(out).toContain('control secret: cli-secret');
      expect(out).toContain(
        `curl --cacert ${caFile} -X POST ${url}/v2/auth/token/ -H 'content-type: application/json' -d '{"email":"machine@sandbox.test","password":"sandbox-password"}'`,
      );
      const agent = new Agent({ connect: { ca: readFileSync(caFile as string, 'utf8') } });
      const res = await request(`${url}/v2/shipments/nmfc/`, { headers: { authorization: 'APIkey sandbox-api-key-0001' }, dispatcher: agent });
      expect(((await res.body.json()) as { total_count: number }).total_count).toBe(1234);
      await agent.close();
    } finally {
      cli.child.kill('SIGTERM');
    }
    expect(await cli.exited).toBe(0);
  });

  it('a restart keeps the CA file, the control secret and the data changes; --reset forgets the data', async () => {
    const cwd = testTempDir('refsync-sandbox-restart');
    const start = async (args: string[] = []) => {
      const cli = startCli(['--port', '0', ...args], cwd);
      await waitFor(() => /stop with Ctrl-C/.test(cli.output().stdout));
      const out = cli.output().stdout;
      const url = /listening on (https:\/\/127\.0\.0\.1:\d+)/.exec(out)![1]!;
      const caFile = /CA certificate: (\S+)/.exec(out)![1]!;
      const secret = /control secret: (\S+)/.exec(out)![1]!;
      const agent = new Agent({ connect: { ca: readFileSync(caFile, 'utf8') } });
      const control = async (name: string, body: object) => {
        const res = await request(`${url}/__sandbox/${name}`, {
          method: 'POST',
          headers: { 'x-sandbox-control': secret, 'content-type': 'application/json' },
          body: JSON.stringify(body),
          dispatcher: agent,
        });
        return (await res.body.json()) as { result?: Array<{ code: string }> };
      };
      const codes = async () => (await control('getEntries', { list: 'accessorials' })).result!.map((e) => e.code);
      const stop = async () => {
        await agent.close();
        cli.child.kill('SIGTERM');
        expect(await cli.exited).toBe(0);
      };
      return { out, caFile, caPem: readFileSync(caFile, 'utf8'), secret, control, codes, stop };
    };

    const first = await start();
    expect(first.caFile).toBe(join(cwd, '.refsync/sandbox/sandbox-ca.pem'));
    expect(first.out).toContain(`kept in ${join(cwd, '.refsync/sandbox')}`);
    await first.control('addEntry', { list: 'accessorials', entry: { code: 'KEPT', description: 'kept across restarts' } });
    await first.control('removeEntry', { list: 'accessorials', entryKey: 'LGDEL' });
    await first.control('setLatency', { ms: 5 });
    await first.stop();

    const again = await start();
    expect([again.caFile, again.caPem, again.secret]).toEqual([first.caFile, first.caPem, first.secret]);
    expect(await again.codes()).toContain('KEPT');
    expect(await again.codes()).not.toContain('LGDEL');
    await again.stop();

    const reset = await start(['--reset']);
    expect(reset.caPem).toBe(first.caPem);
    expect(await reset.codes()).not.toContain('KEPT');
    expect(await reset.codes()).toContain('LGDEL');
    await reset.stop();
  });

  it('on a wildcard host: warns on stderr that it listens beyond loopback and names the address it is bound to', async () => {
    const cli = startCli(['--port', '0', '--host', '0.0.0.0']);
    try {
      await waitFor(() => /stop with Ctrl-C/.test(cli.output().stdout));
      const { stdout, stderr } = cli.output();
      const port = /listening on 0\.0\.0\.0:(\d+); on this machine: https:\/\/127\.0\.0\.1:(\d+)\n/.exec(stdout);
      expect(port, stdout).not.toBeNull();
      expect(port![1]).toBe(port![2]);
      expect(stderr).toContain(`refsync: warning: the sandbox listens on 0.0.0.0:${port![1]}, beyond this machine's loopback`);
    } finally {
      cli.child.kill('SIGTERM');
    }
    expect(await cli.exited).toBe(0);

    const loopback = startCli(['--port', '0', '--host', '127.0.0.2']);
    try {
      await waitFor(() => /stop with Ctrl-C/.test(loopback.output().stdout));
      expect(loopback.output().stdout).toMatch(/^refsync sandbox listening on https:\/\/127\.0\.0\.2:\d+\n/);
      expect(loopback.output().stderr).not.toMatch(/warning/);
    } finally {
      loopback.child.kill('SIGTERM');
    }
    expect(await loopback.exited).toBe(0);
  });

  it('the files it writes are for its owner only, whatever mode an older file had', async () => {
    const cwd = testTempDir('refsync-sandbox-modes');
    const folder = join(cwd, '.refsync/sandbox');
    mkdirSync(folder, { recursive: true });
    // Files an older sandbox left readable by everyone, for other host names: made again.
    for (const name of ['sandbox-key.pem', 'sandbox-cert.pem', 'sandbox-ca.pem', 'control-secret', 'data-changes.jsonl']) {
      writeFileSync(join(folder, name), name === 'data-changes.jsonl' ? '' : 'old\n', { mode: 0o644 });
    }
    writeFileSync(join(folder, 'control-secret'), '\n', { mode: 0o644 });
    writeFileSync(join(folder, 'sandbox-hosts.txt'), 'old.example', { mode: 0o644 });
    const cli = startCli(['--port', '0'], cwd);
    try {
      await waitFor(() => /stop with Ctrl-C/.test(cli.output().stdout));
      const out = cli.output().stdout;
      const url = /listening on (https:\/\/127\.0\.0\.1:\d+)/.exec(out)![1]!;
      const secret = /control secret: (\S+)/.exec(out)![1]!;
      const agent = new Agent({ connect: { ca: readFileSync(join(folder, 'sandbox-ca.pem'), 'utf8') } });
      const res = await request(`${url}/__sandbox/addEntry`, {
        method: 'POST',
        headers: { 'x-sandbox-control': secret, 'content-type': 'application/json' },
        body: JSON.stringify({ list: 'accessorials', entry: { code: 'MODE', description: 'journal written' } }),
        dispatcher: agent,
      });
      expect(res.statusCode).toBe(200);
      await res.body.dump();
      await agent.close();
      const modes = Object.fromEntries(readdirSync(folder).map((name) => [name, (statSync(join(folder, name)).mode & 0o777).toString(8)]));
      expect(modes).toEqual({
        'sandbox-key.pem': '600',
        'sandbox-cert.pem': '600',
        'sandbox-ca.pem': '600',
        'sandbox-hosts.txt': '600',
        'control-secret': '600',
        'data-changes.jsonl': '600',
      });
    } finally {
      cli.child.kill('SIGTERM');
    }
    expect(await cli.exited).toBe(0);
  });

  it('exits 2 with one line on a bad flag or value', async () => {
    for (const args of [['--bogus'], ['--port', 'abc'], ['--latency', '-5']]) {
      const cli = startCli(args);
      expect(await cli.exited, args.join(' ')).toBe(2);
      const err = cli.output().stderr.trim();
      expect(err.split('\n')).toHaveLength(1);
      expect(err).toMatch(/^refsync: sandbox: /);
    }
  });
});
