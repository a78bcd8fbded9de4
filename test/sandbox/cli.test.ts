import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';

const bin = fileURLToPath(new URL('../../bin/refsync.js', import.meta.url));

function startCli(args: string[]) {
  const child = spawn(process.execPath, [bin, 'sandbox', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LOG_LEVEL: 'warn' } });
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
