// The hostile-input table of docs/security.md: configuration that would send the credential
// elsewhere, and upstream answers that try to redirect it, break a header, or drive the operator's
// terminal. Each case runs `refsync sync` as a user would (a subprocess, against the sandbox or a
// local HTTPS server standing in for the upstream) and asserts what the user sees; a second local
// HTTPS origin records every request it receives and must receive none.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { slackBody, type AlertRecord } from '../../src/alerts/format.ts';
import type { ListOverride } from '../../src/config/types.ts';
import { runSync } from '../../src/sync/run/run-sync.ts';
import { createUpstreamClient } from '../../src/upstream/index.ts';
import { slackTextOfNewCode } from '../alerts/fixture.ts';
import { startReceiver } from '../alerts/receiver.ts';
import { runCli, type CliResult } from '../helpers/cli.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { sandboxEnv, sandboxSource } from '../helpers/source.ts';
import { json, tinyServer, type TinyServer } from '../upstream/fixtures.ts';
import { testTempDir } from '../helpers/temp-dir.ts';

const t = useTestDatabase();
const dir = testTempDir('refsync-security');
let sb: Sandbox;
/** The second origin: never configured, trusted by the client (so only refusal keeps it unreached). */
let other: TinyServer;
/** The test's own upstream for answers the sandbox has no switch for; `answer` is set per case. */
let rogue: TinyServer;
type Answer = (req: IncomingMessage, res: ServerResponse) => void;
const fineAnswer: Answer = (_req, res) => json(res, 200, { results: [{ code: 'UN1234', description: 'fine' }], total_count: 1 });
let answer = fineAnswer;
/** One CA file trusting the sandbox, the rogue upstream and the second origin. */
let caFile: string;
let envSeq = 0;

const ROGUE_TOKEN = 'rogue-token-0123456789abcdef';
let loginAnswer: Record<string, unknown> = { token: ROGUE_TOKEN };

beforeAll(async () => {
  sb = await useSandbox();
  other = await tinyServer((_req, res) => json(res, 200, { results: [{ code: 'STOLEN' }], total_count: 1 }));
  rogue = await tinyServer((req, res) => {
    if (req.url === '/v2/auth/token/') return json(res, 200, loginAnswer);
    answer(req, res);
  });
  caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, [sb.caPem, rogue.caPem, other.caPem].join('\n'));
});
afterAll(async () => {
  await Promise.all([other?.close(), rogue?.close()]);
});
let otherConnectionsSeen = 0;
afterEach(() => {
  // Reset first, so one failing case does not fail the next ones.
  const received = other.requests.splice(0);
  const connections = other.connections() - otherConnectionsSeen;
  otherConnectionsSeen = other.connections();
  sb.control.reset();
  rogue.requests.length = 0;
  loginAnswer = { token: ROGUE_TOKEN };
  answer = fineAnswer;
  expect(received, 'the second origin received a request').toEqual([]);
  expect(connections, 'the second origin was connected to').toBe(0);
});

const otherHost = () => new URL(other.url).host;

/** `refsync sync` of the hazmat list, as a user would run it, against `upstream`. */
function sync(upstream: 'sandbox' | 'rogue', extra: Record<string, string> = {}, args: string[] = []): Promise<CliResult> {
  const base = upstream === 'sandbox' ? sandboxEnv(sb) : { ...sandboxEnv(sb), REFSYNC_BASE_URL: rogue.url };
  return runCli(['sync', '--list', 'hazmat', ...args], {
    env: {
      ...base,
      REFSYNC_CA_FILE: caFile,
      REFSYNC_ENVIRONMENT: `security-${process.pid}-${++envSeq}`,
      REFSYNC_LISTS: 'hazmat',
      DATABASE_URL: t.url,
      LOG_LEVEL: 'info',
      ...extra,
    },
  });
}

function configFile(content: unknown): string {
  const path = join(dir, `config-${++envSeq}.json`);
  writeFileSync(path, JSON.stringify(content));
  return path;
}

/** No raw control character in what reached the terminal: C0 (but tab, newline), DEL, C1, bidi overrides. */
function expectTerminalSafe(r: CliResult): void {
  for (const [name, bytes] of [
    ['stdout', r.stdoutBytes],
    ['stderr', r.stderrBytes],
  ] as const) {
    const at = bytes.findIndex((b) => (b < 0x20 && b !== 0x09 && b !== 0x0a) || b === 0x7f);
    expect(at, `${name} holds the raw control byte 0x${at >= 0 ? bytes[at]!.toString(16) : ''}`).toBe(-1);
    expect(bytes.toString('utf8'), `${name} holds a raw C1 or bidi control`).not.toMatch(/[\u0080-\u009f\u202a-\u202e\u2066-\u2069]/);
  }
}

/** The one progress line of the hazmat list. */
function hazmatLine(r: CliResult): string {
  const lines = r.stdout.split('\n').filter((l) => / hazmat /.test(` ${l}`));
  expect(lines, r.stdout + r.stderr).toHaveLength(1);
  return lines[0]!;
}

async function lastSnapshot(environment: string): Promise<{ status: string; error_code: string | null; error: string | null }> {
  const { rows } = await t.db.query<{ status: string; error_code: string | null; error: string | null }>(
    `select status, error_code, error from refdata.snapshots where environment = $1 and list_key = 'hazmat' order by id desc limit 1`,
    [environment],
  );
  return rows[0]!;
}
const lastEnvironment = () => `security-${process.pid}-${envSeq}`;

// Override paths that must never pass the start-up check, with why; OTHER is the second origin.
const hostilePaths: Array<[string, () => ListOverride, RegExp]> = [
  ['protocol-relative path', () => ({ basePath: '', path: `//${otherHost()}/v2/shipments/hazmat/` }), /protocol-relative/],
  ['protocol-relative base path', () => ({ basePath: `//${otherHost()}` }), /protocol-relative/],
  ['backslash path', () => ({ basePath: '', path: `/\\${otherHost()}/v2/shipments/hazmat/` }), /backslash/],
  ['absolute URL', () => ({ basePath: '', path: `${other.url}/v2/shipments/hazmat/` }), /absolute URL/],
  ['percent-encoded slashes', () => ({ path: `/%2f%2f${otherHost()}/hazmat/` }), /percent-encoded/],
  ['percent-encoded dots', () => ({ path: '/shipments/%2e%2e/%2E%2E/hazmat/' }), /percent-encoded/],
  ['percent-encoded backslash', () => ({ path: '/shipments/%5chazmat/' }), /percent-encoded/],
  ['dot-dot segment', () => ({ path: '/shipments/../../hazmat/' }), /'\.' or '\.\.' segment/],
  ['dot segment', () => ({ path: '/shipments/./hazmat/' }), /'\.' or '\.\.' segment/],
  ['user info', () => ({ path: `/user:pw@${otherHost()}/hazmat/` }), /user info/],
  ['control characters', () => ({ path: '/shipments/\u001b[2J\u0007hazmat/' }), /control character/],
  ['whitespace', () => ({ path: '/shipments/ hazmat/' }), /whitespace/],
];

describe('configuration that would send the credential elsewhere', () => {
  it('a hazmat override with a protocol-relative path is refused at start: exit 2, one line naming catalog.hazmat.path', async () => {
    const config = configFile({ catalog: { hazmat: { basePath: '', path: '//other-host.example/v2/shipments/hazmat/' } } });
    const r = await sync('sandbox', { REFSYNC_CONFIG: config });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      "refsync: REFSYNC_CONFIG catalog.hazmat.path: '//other-host.example/v2/shipments/hazmat/' — is protocol-relative (starts with //), so it would leave the configured origin\n",
    );
  });

  it.each(hostilePaths)('%s: refused at start, exit 2, naming the setting', async (_name, override, reason) => {
    const o = override();
    const r = await sync('sandbox', { REFSYNC_CONFIG: configFile({ catalog: { hazmat: o } }) });
    expect(r.code).toBe(2);
    const field = o.path !== undefined ? 'path' : 'basePath';
    expect(r.stderr).toMatch(new RegExp(`^refsync: REFSYNC_CONFIG catalog\\.hazmat\\.${field}: .*\\n$`));
    expect(r.stderr).toMatch(reason);
    expectTerminalSafe(r);
  });

  it('the same override inside a source names that source', async () => {
    const sources = [{ environment: 'a', baseUrl: sb.url, listOverrides: { hazmat: { path: `//${otherHost()}/x/` } } }];
    const r = await sync('sandbox', { REFSYNC_CONFIG: configFile({ sources }) });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^refsync: REFSYNC_CONFIG sources\[0\] \(a\)\.listOverrides\.hazmat\.path: .* protocol-relative/);
  });

  it.each(['../fedex', 'fed%2fex', 'x@other', 'FedEx'])('carrier %j (part of /quoting/<carrier>/) is refused at start', async (carrier) => {
    const r = await sync('sandbox', { REFSYNC_CARRIERS: `ups,${carrier}` });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^refsync: REFSYNC_CARRIERS\[1\]: .*must be lower-case names like fedex\n$/);
  });

  describe('with the start-up check bypassed, the transport still refuses and the other origin sees nothing', () => {
    it.each(hostilePaths)('%s', async (_name, override) => {
      const source = sandboxSource(sb, { REFSYNC_ENVIRONMENT: `security-bypass-${process.pid}-${++envSeq}`, REFSYNC_LISTS: 'hazmat' });
      source.listOverrides = { hazmat: override() };
      // The client trusts the second origin too: only the origin check stands between it and the token.
      const client = createUpstreamClient(source, undefined, { ca: [sb.caPem, other.caPem], retry: { attempts: 1 } });
      try {
        const [run] = await runSync({ db: t.db, sources: [source], clientFor: () => client, trigger: 'cli' });
        const outcome = run!.outcomes[0]!;
        expect(
          other.requests.map((q) => q.headers.authorization),
          'credentials the second origin received',
        ).toEqual([]);
        // Off-origin URLs fail as origin_mismatch; the rest stay on the configured origin, which
        // answers them as it likes (the afterEach checks the other origin saw nothing).
        const o = override();
        const resolved = new URL((o.basePath ?? '/v2') + (o.path ?? '/shipments/hazmat/'), sb.url);
        if (!(o.path ?? '/').startsWith('/')) {
          // Not a path at all: the client refuses it before building a request.
          expect(outcome).toMatchObject({ status: 'failed', errorCode: 'config' });
        } else if (resolved.origin !== sb.url) {
          expect(outcome).toMatchObject({ status: 'failed', errorCode: 'origin_mismatch' });
          expect(outcome.error).toMatch(
            new RegExp(
              `points to another origin \\(${resolved.origin.replace(/[.]/g, '\\.')}\\), not ${sb.url.replace(/[.]/g, '\\.')}; refused, nothing sent$`,
            ),
          );
        }
      } finally {
        await client.close();
      }
    });
  });
});

describe('upstream answers that try to send the credential elsewhere', () => {
  it('a next link to another origin: refused before sending, the list fails as origin_mismatch', async () => {
    sb.control.setPaging('hazmat', 'next', { defaultPageSize: 3 });
    sb.control.setFaults({ foreignNext: { list: 'hazmat', url: `${other.url}/v2/shipments/hazmat/?page=2` } });
    const r = await sync('sandbox');
    expect(
      other.requests.map((q) => q.headers.authorization),
      'credentials the second origin received',
    ).toEqual([]);
    expect(r.code).toBe(1);
    expect(hazmatLine(r)).toMatch(
      new RegExp(
        `^failed .*'next' link points to another origin \\(${other.url.replace(/[.]/g, '\\.')}\\), not ${sb.url.replace(/[.]/g, '\\.')}; refused, nothing sent$`,
      ),
    );
    expect(await lastSnapshot(lastEnvironment())).toMatchObject({ status: 'failed', error_code: 'origin_mismatch' });
    expectTerminalSafe(r);
  });

  it.each([301, 302, 307, 308])('a %i redirect to another origin is not followed: nothing sent there, the list fails', async (status) => {
    answer = (req, res) => {
      res.writeHead(status, { location: `${other.url}${req.url}` });
      res.end();
    };
    const r = await sync('rogue');
    expect(
      other.requests.map((q) => q.headers.authorization),
      'credentials the second origin received',
    ).toEqual([]);
    expect(r.code).toBe(1);
    expect(hazmatLine(r)).toMatch(new RegExp(`^failed .*GET /v2/shipments/hazmat/ page 1: answered ${status} redirect; redirects are not followed`));
    expect(await lastSnapshot(lastEnvironment())).toMatchObject({ status: 'failed', error_code: 'protocol' });
    expect(rogue.requests.filter((q) => q.url.startsWith('/v2/shipments/hazmat/'))).toHaveLength(1);
    expectTerminalSafe(r);
  });
});

describe('login answers that would break the Authorization header', () => {
  const cases: Array<[string, () => Record<string, unknown>, RegExp]> = [
    [
      'an api_key of 10 MB',
      () => ({ token: ROGUE_TOKEN, api_key: 'k'.repeat(10 * 2 ** 20) }),
      /api_key is not a usable credential \(10485760 characters, more than 8192\); refused$/,
    ],
    [
      'an api_key with control characters',
      () => ({ token: ROGUE_TOKEN, api_key: 'key\r\nX-Injected: 1\u001b[2J' }),
      /api_key is not a usable credential \(holds characters other than visible ASCII/,
    ],
    [
      'a token with a line break',
      () => ({ token: `${ROGUE_TOKEN}\r\nX-Injected: 1` }),
      /token is not a usable credential \(holds characters other than visible ASCII/,
    ],
  ];
  it.each(cases)('%s: the login is refused, the list fails with one line, nothing is sent with it', async (_name, login, reason) => {
    loginAnswer = login();
    answer = (_req, res) => json(res, 200, []);
    const r = await sync('rogue');
    expect(r.code).toBe(1);
    expect(hazmatLine(r)).toMatch(/^failed .*POST \/v2\/auth\/token\//);
    expect(hazmatLine(r)).toMatch(reason);
    // The login was asked once (not retried) and no list request went out with that answer.
    expect(rogue.requests.filter((q) => q.url.startsWith('/v2/shipments/'))).toEqual([]);
    expect(r.stdout.length + r.stderr.length).toBeLessThan(20_000);
    expectTerminalSafe(r);
  });
});

describe('upstream text never becomes terminal control', () => {
  const ansi = '\u001b[2J\u001b]0;owned title\u0007\u009b31m\u202e';
  it('an error body with ANSI/OSC sequences: the sync prints them escaped, never raw (stdout and stderr bytes)', async () => {
    answer = (_req, res) => json(res, 404, { detail: `Not found ${ansi}<script>alert(1)</script>` });
    const r = await sync('rogue');
    expect(r.code).toBe(1);
    expectTerminalSafe(r);
    expect(hazmatLine(r)).toMatch(/^unavailable .*404: Not found \\u001b\[2J\\u001b\]0;owned title\\u0007\\u009b31m\\u202e<script>alert\(1\)<\/script>$/);
    // The stored error keeps the text as data.
    expect((await lastSnapshot(lastEnvironment())).error).toContain(ansi);
  });

  it('an error body with a NUL: printed escaped, and the failure is recorded with U+FFFD in its place', async () => {
    answer = (_req, res) => json(res, 404, { detail: 'Not\u0000found' });
    const r = await sync('rogue');
    expect(r.code).toBe(1);
    expectTerminalSafe(r);
    expect(hazmatLine(r)).toMatch(/404: Not\\u0000found$/);
    expect((await lastSnapshot(lastEnvironment())).error).toContain('Not\ufffdfound');
  });

  it('an HTML error page with control characters in its title: escaped', async () => {
    answer = (_req, res) => {
      res.writeHead(400, { 'content-type': 'text/html' });
      res.end(`<html><head><title>Denied ${ansi}</title></head><body><img src=x onerror=alert(1)></body></html>`);
    };
    const r = await sync('rogue');
    expect(r.code).toBe(1);
    expectTerminalSafe(r);
    expect(hazmatLine(r)).toMatch(/400: HTML page 'Denied \\u001b\[2J\\u001b\]0;owned title\\u0007\\u009b31m\\u202e'$/);
  });

  it('entry fields with markup and control characters: stored as served, printed literally, escaped for the terminal', async () => {
    const hostile = [
      { code: '<script>alert(1)</script>', description: '<img src=x onerror=alert(1)>' },
      { code: 'UN\u001b]0;x\u0007', description: `clear ${ansi}` },
    ];
    const first = await sync('sandbox');
    expect(first.code).toBe(0);
    for (const entry of hostile) sb.control.addEntry('hazmat', entry);
    const environment = lastEnvironment();
    const r = await sync('sandbox', { REFSYNC_ENVIRONMENT: environment });
    expect(r.code).toBe(0);
    expectTerminalSafe(r);
    const { rows } = await t.db.query<{ code: string; description: string }>(
      `select code, description from refdata.current_entries where environment = $1 and list_key = 'hazmat' order by code`,
      [environment],
    );
    for (const entry of hostile) expect(rows).toContainEqual(entry);
    const changes = await runCli(['changes', '--list', 'hazmat'], { env: { ...sandboxEnv(sb), REFSYNC_ENVIRONMENT: environment, DATABASE_URL: t.url } });
    expect(changes.code).toBe(0);
    expectTerminalSafe(changes);
    expect(changes.stdout).toContain('<script>alert(1)</script>');
    expect(changes.stdout).toContain('UN\\u001b]0;x\\u0007');
  });

  it('check-auth: who /v2/auth/me/ says the user is, printed escaped', async () => {
    answer = (req, res) => (req.url === '/v2/auth/me/' ? json(res, 200, { id: 7, email: `ops${ansi}@x.example` }) : fineAnswer(req, res));
    const r = await runCli(['check-auth'], { env: { ...sandboxEnv(sb), REFSYNC_BASE_URL: rogue.url, REFSYNC_CA_FILE: caFile } });
    expect(r.code).toBe(0);
    expectTerminalSafe(r);
    expect(r.stdout).toBe('sandbox: ok — user 7 ops\\u001b[2J\\u001b]0;owned title\\u0007\\u009b31m\\u202e@x.example via token\n');
  });

  it('response header values with CR, LF or control bytes: the answer is refused or shown escaped, one line', async () => {
    const raw = (head: string) => (req: IncomingMessage) => {
      req.socket.end(Buffer.from(`HTTP/1.1 200 OK\r\n${head}\r\ncontent-length: 2\r\nconnection: close\r\n\r\n[]`, 'latin1'));
    };
    for (const [head, reason] of [
      ['content-type: application/json\rX-Injected: 1', /page 1: (malformed HTTP response|connection failed) before the response headers \(/],
      ['content-type: application/json\nX-Injected: 1\u001b[2J', /page 1: (malformed HTTP response|connection failed) before the response headers \(/],
      ['content-type: text/plain\u009b2J\u0085', /answered 'text\/plain\\u009b2j\\u0085' instead of JSON/],
    ] as const) {
      answer = raw(head);
      const r = await sync('rogue');
      expect(r.code, head).toBe(1);
      expectTerminalSafe(r);
      expect(hazmatLine(r)).toMatch(reason);
    }
  });
});

describe('Slack text built from upstream data cannot inject markup', () => {
  it('entries with <, > and & reach Slack escaped: no link, mention or tag survives', async () => {
    const { text, kinds } = await slackTextOfNewCode(await startReceiver(), t.db, t.url, sb, {
      code: '<!channel>',
      description: '<https://evil.example|click> & <script>x</script>',
    });
    expect(text).toContain('`&lt;!channel&gt;` — `&lt;https://evil.example|click&gt; &amp; &lt;script&gt;x&lt;/script&gt;`');
    expect(text).not.toMatch(/[<>]/);
    expect(kinds).toEqual(['added']);
  });

  it('the Slack escape covers every upstream string of every alert kind', () => {
    const hostile = '<!here> <@U1> & <https://x|y>';
    const base: Omit<AlertRecord, 'kind' | 'payload'> = {
      id: 1,
      snapshotId: 1,
      runId: null,
      createdAt: new Date(),
      retriesFrom: new Date(),
      attempts: 0,
      environment: hostile,
      listKey: 'hazmat',
      variant: '',
    };
    const payloads: Array<[string, Record<string, unknown>]> = [
      ['added', { count: 1, entries: [{ code: hostile, description: hostile }] }],
      ['held', { message: hostile }],
      ['failed', { error: hostile, error_code: 'protocol' }],
      ['schema_changed', { fields_added: [hostile], fields_removed: [hostile] }],
    ];
    for (const [kind, payload] of payloads) {
      const text = (JSON.parse(slackBody({ ...base, kind, payload })) as { text: string }).text;
      expect(text, kind).not.toMatch(/[<>]/);
      expect(text, kind).toContain('&lt;!here&gt; &lt;@U1&gt; &amp; &lt;https://x|y&gt;');
    }
  });
});
