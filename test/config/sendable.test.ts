import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.ts';
import { configError } from './config-error.ts';
import { testTempDir } from '../helpers/temp-dir.ts';

// Settings that go into a request (a header, a login body, a URL) or open a connection with a
// credential: a control character in any of them is refused at start, naming the setting only.

const dir = testTempDir('refsync-sendable');
let files = 0;
const file = (contents: string) => {
  const path = join(dir, `value-${files++}`);
  writeFileSync(path, contents);
  return path;
};

const base = { REFSYNC_BASE_URL: 'https://api.vendor.example', REFSYNC_API_KEY: 'good-key' };
const secret = 'secret-part';
// One of each kind of control character, rotated over the settings.
const controls = ['\r\n', '\n', '\r', '\u0000', '\t', '\u001b', '\u007f'];
const bad = (i: number) => `abc${secret}${controls[i % controls.length]}X`;
/** A password travels only in the login's JSON body, where a tab is ordinary: its bad values are the others. */
const badFor = (name: string, i: number) => (/password/i.test(name) && bad(i).includes('\t') ? `abc${secret}\nX` : bad(i));

/** [setting named in the error, environment that carries the bad value there]. */
const envCases: Array<[string, (value: string) => Record<string, string>]> = [
  ['REFSYNC_API_KEY', (v) => ({ ...base, REFSYNC_API_KEY: v })],
  ['REFSYNC_API_KEY_FILE', (v) => ({ ...base, REFSYNC_API_KEY: '', REFSYNC_API_KEY_FILE: file(`${v}\n`) })],
  ['REFSYNC_PASSWORD', (v) => ({ ...base, REFSYNC_EMAIL: 'm@acme.example', REFSYNC_PASSWORD: v })],
  ['REFSYNC_PASSWORD_FILE', (v) => ({ ...base, REFSYNC_EMAIL: 'm@acme.example', REFSYNC_PASSWORD_FILE: file(v) })],
  ['REFSYNC_EMAIL', (v) => ({ ...base, REFSYNC_EMAIL: v, REFSYNC_PASSWORD: 'pw' })],
  ['REFSYNC_BASE_URL', (v) => ({ ...base, REFSYNC_BASE_URL: `https://api.vendor.example${v}` })],
  ['REFSYNC_WEBHOOK_URL', (v) => ({ ...base, REFSYNC_WEBHOOK_URL: `https://hooks.example/${v}` })],
  ['REFSYNC_WEBHOOK_SECRET', (v) => ({ ...base, REFSYNC_WEBHOOK_URL: 'https://hooks.example/x', REFSYNC_WEBHOOK_SECRET: `whsec_${v}` })],
  ['REFSYNC_WEBHOOK_SECRET_FILE', (v) => ({ ...base, REFSYNC_WEBHOOK_URL: 'https://hooks.example/x', REFSYNC_WEBHOOK_SECRET_FILE: file(`whsec_${v}`) })],
  ['REFSYNC_DASHBOARD_PASSWORD', (v) => ({ ...base, REFSYNC_DASHBOARD_PASSWORD: v })],
  ['REFSYNC_DASHBOARD_PASSWORD_FILE', (v) => ({ ...base, REFSYNC_DASHBOARD_PASSWORD_FILE: file(v) })],
  ['DATABASE_URL', (v) => ({ ...base, DATABASE_URL: `postgres://u:${v}@db/refsync` })],
  ['DATABASE_URL_FILE', (v) => ({ ...base, DATABASE_URL_FILE: file(`postgres://u:${v}@db/refsync`) })],
  ['REDIS_URL', (v) => ({ ...base, REDIS_URL: `redis://:${v}@redis:6379` })],
  ['REFSYNC_LISTEN_DATABASE_URL', (v) => ({ ...base, REFSYNC_LISTEN_DATABASE_URL: `postgres://u:${v}@db/refsync` })],
];

/** The same fields per source in REFSYNC_CONFIG: [field named in the error, source fields]. */
const source = { environment: 'acme', baseUrl: 'https://api.vendor.example', apiKey: 'good-key' };
const fileCases: Array<[string, (value: string) => Record<string, string>]> = [
  ['apiKey', (v) => ({ ...source, apiKey: v })],
  ['apiKeyFile', (v) => ({ environment: 'acme', baseUrl: source.baseUrl, apiKeyFile: file(v) })],
  ['password', (v) => ({ ...source, email: 'm@acme.example', password: v })],
  ['passwordFile', (v) => ({ ...source, email: 'm@acme.example', passwordFile: file(`${v}\n`) })],
  ['email', (v) => ({ ...source, email: v, password: 'pw' })],
  ['baseUrl', (v) => ({ ...source, baseUrl: `https://api.vendor.example${v}` })],
  ['webhookUrl', (v) => ({ ...source, webhookUrl: `https://hooks.example/${v}` })],
  ['webhookSecret', (v) => ({ ...source, webhookUrl: 'https://hooks.example/x', webhookSecret: `whsec_${v}` })],
  ['webhookSecretFile', (v) => ({ ...source, webhookUrl: 'https://hooks.example/x', webhookSecretFile: file(`whsec_${v}`) })],
];

const expected = (name: string) => `${name}: holds a control character (CR, LF, NUL or the like), which cannot be sent; remove it`;

describe('settings that cannot be sent are refused at start', () => {
  it.each(envCases.map(([name, env], i) => [name, env, i] as const))('%s', (name, env, i) => {
    const message = configError(env(badFor(name, i)));
    expect(message).toBe(expected(name));
    expect(message).not.toContain(secret);
  });

  it.each(fileCases.map(([field, fields], i) => [field, fields, i] as const))('REFSYNC_CONFIG sources[].%s', (field, fields, i) => {
    const config = file(JSON.stringify({ sources: [fields(badFor(field, i))] }));
    const message = configError({ REFSYNC_CONFIG: config });
    expect(message).toBe(expected(`REFSYNC_CONFIG sources[0] (acme).${field}`));
    expect(message).not.toContain(secret);
  });

  it('takes the same settings without the control character, and a secret file ending in one newline', () => {
    for (const [, env] of envCases) expect(() => loadConfig(env('abcX'))).not.toThrow();
    for (const [, fields] of fileCases) {
      expect(() => loadConfig({ REFSYNC_CONFIG: file(JSON.stringify({ sources: [fields('abcX')] })) })).not.toThrow();
    }
    expect(loadConfig({ ...base, REFSYNC_API_KEY: '', REFSYNC_API_KEY_FILE: file('from-file\r\n') }).sources[0]!.apiKey).toBe('from-file');
  });

  it('a password may hold a tab: it only travels inside the login JSON body (line breaks and other controls are still refused)', () => {
    const env = { ...base, REFSYNC_EMAIL: 'm@acme.example', REFSYNC_PASSWORD: 'pass\tphrase' };
    expect(loadConfig(env).sources[0]!.password).toBe('pass\tphrase');
    expect(configError({ ...env, REFSYNC_PASSWORD: 'pass\u001bphrase' })).toBe(expected('REFSYNC_PASSWORD'));
    expect(() => configError({ ...base, REFSYNC_EMAIL: 'm@acme.example\t', REFSYNC_PASSWORD: 'pw' })).not.toThrow();
  });
});
