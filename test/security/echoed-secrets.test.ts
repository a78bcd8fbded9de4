// A service that quotes the password back in its login error, in any spelling
// (JSON-escaped tabs, whitespace collapsed, plain text) and at any length (one that straddles the
// 200-character cut of the summary), never gets a piece of it into what refsync prints, logs or
// stores. `refsync sync` runs as a user would, at trace level, with the sandbox's echoLogin switch;
// then stdout, stderr and every row of every refdata table are searched for any 8 characters of
// the password, in every spelling.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_MACHINE_ACCOUNT } from '../../src/sandbox/index.ts';
import type { SandboxFaults } from '../../src/sandbox/types.ts';
import { secretScrubber } from '../../src/upstream/scrub.ts';
import { summarizeErrorBody } from '../../src/upstream/list-body.ts';
import { runCli } from '../helpers/cli.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { sandboxEnv } from '../helpers/source.ts';

const t = useTestDatabase();
let sb: Sandbox;
beforeAll(async () => {
  sb = await useSandbox();
});
afterEach(() => sb.control.reset());

// Words of 8+ characters that occur nowhere else, joined by a tab, two spaces, tab-tab and
// space-tab; `long` repeats such groups past the 200-character cut (its echo starts near column 60).
const passwords: Array<[string, string]> = [
  ['tabs and double spaces', 'Qz8mVt2kLp\tRw9xHs6dKd  3bNf7cGj5y\t\tYb2hWm8eTq'],
  ['straddling the 200-character cut', Array.from({ length: 12 }, (_, i) => `Zr${i}uXo4pC \tEv${i}nJw3sF`).join('  ')],
];

/** Every run of 8 characters of the password, in every spelling an echo or an escape gives it. */
function pieces(password: string): Set<string> {
  const spellings = [
    password,
    password.replace(/\s+/g, ' '),
    password.replace(/\s+/g, ''),
    JSON.stringify(password).slice(1, -1),
    JSON.stringify(password.replace(/\s+/g, ' ')).slice(1, -1),
  ];
  const out = new Set<string>();
  for (const s of spellings) for (let i = 0; i + 8 <= s.length; i++) out.add(s.slice(i, i + 8));
  return out;
}

function leaks(haystack: string, password: string): string[] {
  return [...pieces(password)].filter((p) => haystack.includes(p));
}

/** Every row of every table of schema refdata, as JSON text. */
async function everyTable(): Promise<string> {
  const { rows: tables } = await t.db.query<{ name: string }>(
    `select table_name as name from information_schema.tables where table_schema = 'refdata' and table_type = 'BASE TABLE'`,
  );
  expect(tables.length).toBeGreaterThan(4);
  const parts: string[] = [];
  for (const { name } of tables) {
    const { rows } = await t.db.query<{ row: string }>(`select row_to_json(x)::text as row from refdata.${JSON.stringify(name)} x`);
    parts.push(...rows.map((r) => r.row));
  }
  return parts.join('\n');
}

let envSeq = 0;

describe('a login that echoes the password', () => {
  const cases = passwords.flatMap(([name, password]) =>
    (['json', 'collapsed', 'text'] as const).map((echo) => [`${name}, echoed as ${echo}`, password, echo] as const),
  );

  it.each(cases)(
    '%s: no 8 characters of it in stdout, stderr (trace logs) or any table',
    async (_name, password, echo: NonNullable<SandboxFaults['echoLogin']>) => {
      sb.control.setFaults({ echoLogin: echo });
      const environment = `echo-${process.pid}-${++envSeq}`;
      const r = await runCli(['sync', '--list', 'hazmat', '--list', 'shipment_modes'], {
        env: sandboxEnv(sb, {
          REFSYNC_PASSWORD: password,
          REFSYNC_ENVIRONMENT: environment,
          REFSYNC_ALERT_ON: 'failed,run_completed',
          DATABASE_URL: t.url,
          LOG_LEVEL: 'trace',
        }),
      });
      const output = r.stdout + r.stderr;
      expect(r.code, output.slice(-2000)).toBe(1);
      // The echo really came back, and was redacted where it stood.
      expect(output).toContain(`Unable to log in as ${SANDBOX_MACHINE_ACCOUNT.email} with the password '[redacted]'`);
      expect(leaks(output, password), 'pieces of the password in stdout/stderr').toEqual([]);

      const { rows } = await t.db.query<{ error: string }>(`select error from refdata.snapshots where environment = $1`, [environment]);
      expect(rows.length).toBe(2);
      for (const row of rows) expect(row.error).toContain("with the password '[redacted]'");
      expect(leaks(await everyTable(), password), 'pieces of the password in a table').toEqual([]);
    },
  );
});

describe('the scrubber, on the raw text before the summary', () => {
  const secret = 'pa ss\tword"<&>\\x\u{1F4E6}';
  it.each([
    ['as sent, in plain text', `bad password ${secret} given`],
    ['JSON-escaped', JSON.stringify({ detail: `bad password ${secret} given` })],
    ['whitespace collapsed', `bad password ${secret.replace(/\s+/g, ' ')} given`],
    ['whitespace dropped', `bad password ${secret.replace(/\s+/g, '')} given`],
    ['tab written \\t in text', `bad password ${secret.replace('\t', '\\t')} given`],
    [
      'HTML-escaped',
      `<html><title>bad password ${secret.replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;').replace('"', '&quot;')} given</title></html>`,
    ],
    [
      '\\u-escaped',
      `{"detail": "bad password ${secret
        .split('')
        .map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`)
        .join('')} given"}`,
    ],
  ])('%s: redacted whole', (_name, body) => {
    const summary = summarizeErrorBody(body, 200, secretScrubber([secret]));
    expect(summary).toMatch(/bad password \[redacted\] given/);
    for (const piece of ['pa ss', 'ss\tword', 'word"', '<&>', '\u{1F4E6}', '\\u']) expect(summary).not.toContain(piece);
  });

  it('a secret that straddles the cut is redacted before the cut, so no part of it is left', () => {
    const long = 'Lq7Tz'.repeat(60);
    const summary = summarizeErrorBody(JSON.stringify({ detail: `${'x'.repeat(150)} ${long} end` }), 200, secretScrubber([long]));
    expect(summary).toBe(`${'x'.repeat(150)} [redacted] end`);
  });

  it('short secrets (under 4 characters) are not scrubbed: they would redact ordinary words', () => {
    expect(secretScrubber(['abc'])('abc abc')).toBe('abc abc');
  });
});
