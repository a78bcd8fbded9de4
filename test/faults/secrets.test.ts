// Secrets. Every faults file checks, after its last test, that its captured
// logs (every client and dispatcher it made, trace level, no redaction) hold no password, token,
// API key or webhook secret (harness.ts). Here: a whole CLI sync at trace level through faults,
// and the settings refused up front.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/errors.ts';
import { loadConfig } from '../../src/config/load.ts';
import { SANDBOX_KEYED_ACCOUNT, SANDBOX_MACHINE_ACCOUNT } from '../../src/sandbox/index.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { sandboxEnv } from '../helpers/source.ts';
import { runCli } from '../queue/helpers.ts';
import { newSecret } from '../alerts/fixture.ts';
import { secrets, uniqueEnvironment } from './harness.ts';
import { testTempDir } from '../helpers/temp-dir.ts';

const t = useTestDatabase();
let sb: Sandbox;
const dir = testTempDir('refsync-faults-secrets');

beforeAll(async () => {
  sb = await useSandbox();
});

function secretFile(name: string, value: string): string {
  const path = join(dir, name);
  writeFileSync(path, `${value}\n`, { mode: 0o600 });
  return path;
}

/** A token of the sandbox: 40 hex digits standing alone (content hashes are 64). */
const tokenPattern = /(?<![0-9a-f])[0-9a-f]{40}(?![0-9a-f])/;

describe('21. secrets', () => {
  it('a CLI sync at trace level, through re-logins, API-key fallback, retries and failures, prints no secret', async () => {
    const webhookSecret = newSecret();
    secrets.add(webhookSecret);
    sb.control.setTokenLifetime({ requests: 3 });
    sb.control.requireApiKey(['piece_types']);
    sb.control.setFaults({ errorCount: 1, resetBody: { count: 1 }, paths: ['shipment_modes'] });
    try {
      const r = await runCli(
        ['sync'],
        sandboxEnv(sb, {
          REFSYNC_EMAIL: SANDBOX_KEYED_ACCOUNT.email,
          REFSYNC_PASSWORD_FILE: secretFile('password', SANDBOX_KEYED_ACCOUNT.password),
          REFSYNC_PASSWORD: '',
          REFSYNC_ENVIRONMENT: uniqueEnvironment('secrets'),
          REFSYNC_LISTS: 'shipment_modes,equipment_types,piece_types,hazmat',
          REFSYNC_WEBHOOK_URL: 'https://127.0.0.1:9/hook-path-credential',
          REFSYNC_WEBHOOK_SECRET: webhookSecret,
          DATABASE_URL: t.url,
          LOG_LEVEL: 'trace',
        }),
      );
      const output = r.stdout + r.stderr;
      expect(r.code, output.slice(-2000)).toBe(0);
      // Debug logging really was on, and the run went through a re-login and a 401.
      expect(output).toMatch(/"level":20/);
      expect(output.match(/logged in to the upstream/g)?.length ?? 0).toBeGreaterThanOrEqual(2);
      expect(output).toMatch(/"status":401/);
      for (const secret of [SANDBOX_KEYED_ACCOUNT.password, SANDBOX_KEYED_ACCOUNT.apiKey!, webhookSecret, webhookSecret.slice(6)]) {
        expect(output.includes(secret), `a secret (${secret.slice(0, 3)}…) in the CLI output`).toBe(false);
      }
      expect(output).not.toMatch(tokenPattern);
      expect(output).not.toContain('hook-path-credential');
    } finally {
      sb.control.reset();
    }
  });

  for (const name of ['REFSYNC_PASSWORD', 'REFSYNC_API_KEY', 'REFSYNC_WEBHOOK_SECRET']) {
    it(`${name} and ${name}_FILE both set: refused by loadConfig and by the CLI (exit 2, one line, no secret)`, async () => {
      const value = name === 'REFSYNC_WEBHOOK_SECRET' ? newSecret() : 'Both-Set-Secret-7781';
      const env = {
        ...sandboxEnv(sb, { DATABASE_URL: t.url, REFSYNC_WEBHOOK_URL: 'https://hooks.example.com/x' }),
        [name]: value,
        [`${name}_FILE`]: secretFile(`${name}.txt`, value),
      };
      let thrown: unknown;
      try {
        loadConfig(env);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(ConfigError);
      expect((thrown as Error).message).toContain(`${name} and ${name}_FILE are both set`);
      expect((thrown as Error).message).not.toContain(value);

      const r = await runCli(['sync'], env);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain(`${name}_FILE`);
      expect(r.stderr).not.toContain(value);
    });
  }

  it('NODE_TLS_REJECT_UNAUTHORIZED=0 is refused: exit 2, one line', async () => {
    const r = await runCli(['sync'], { ...sandboxEnv(sb, { DATABASE_URL: t.url }), NODE_TLS_REJECT_UNAUTHORIZED: '0' });
    expect(r.code).toBe(2);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/NODE_TLS_REJECT_UNAUTHORIZED/);
    expect(r.stderr).not.toContain(SANDBOX_MACHINE_ACCOUNT.password);
  });
});
