import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/types.ts';
import { KEYED, MACHINE, sandbox } from './fixtures.ts';

let sb: Sandbox;
beforeAll(async () => {
  sb = await sandbox();
});
afterAll(async () => {
  await sb.close();
});

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `refsync check-auth` as a subprocess (async: the sandbox answers from this process's event loop). */
function checkAuth(env: Record<string, string>, args: string[] = []): Promise<Result> {
  const clean: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('REFSYNC_')) clean[k] = v;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/refsync.js', 'check-auth', ...args], {
      cwd: new URL('../..', import.meta.url),
      env: { ...clean, LOG_LEVEL: 'error', REFSYNC_ENVIRONMENT: 'sandbox', REFSYNC_CA_FILE: sb.caFile, REFSYNC_BASE_URL: sb.url, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('refsync check-auth', () => {
  it('prints who the credential belongs to, and no secret', async () => {
    const r = await checkAuth({ REFSYNC_EMAIL: MACHINE.email, REFSYNC_PASSWORD: MACHINE.password });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toBe('sandbox: ok — user 4101 machine@sandbox.test via token\n');
  });

  it('API key only, bearer scheme, --json', async () => {
    const r = await checkAuth({ REFSYNC_API_KEY: KEYED.apiKey, REFSYNC_API_KEY_SCHEME: 'bearer' }, ['--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([{ environment: 'sandbox', ok: true, userId: 4102, email: KEYED.email, scheme: 'bearer' }]);
    expect(r.stdout).not.toContain(KEYED.apiKey);
  });

  it('a wrong password: exit 1, one line, no secret', async () => {
    const r = await checkAuth({ REFSYNC_EMAIL: MACHINE.email, REFSYNC_PASSWORD: 'Wrong-Password-123' });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^refsync: sandbox: POST \/v2\/auth\/token\/: login refused/);
    expect(r.stderr).not.toContain('Wrong-Password-123');
  });

  it('an untrusted certificate: exit 1, one line naming REFSYNC_CA_FILE', async () => {
    const r = await checkAuth({ REFSYNC_EMAIL: MACHINE.email, REFSYNC_PASSWORD: MACHINE.password, REFSYNC_CA_FILE: '' });
    expect(r.code).toBe(1);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/TLS: certificate of 127\.0\.0\.1:\d+ is not trusted .*REFSYNC_CA_FILE/);
  });

  it('an http:// base URL: exit 2, one line', async () => {
    const r = await checkAuth({ REFSYNC_EMAIL: MACHINE.email, REFSYNC_PASSWORD: MACHINE.password, REFSYNC_BASE_URL: sb.url.replace('https:', 'http:') });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^refsync: REFSYNC_BASE_URL: .*http:\/\/ is refused/);
  });
});
