// Upstream strings reach two renderers that would act on them. dbt renders the
// strings of a sources file as Jinja: a field named {{ env_var('PGPASSWORD') }} must print as that
// text, never run (checked with Jinja itself, Python's jinja2 as dbt uses it, with dbt's `do`
// extension). Slack renders mrkdwn: an upstream string must land where Slack neither formats nor
// links it (a code span), whatever it holds (backticks, line breaks, URLs, *bold*, <!channel>).
import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { slackBody, type AlertRecord } from '../../src/alerts/format.ts';
import { inertJinja } from '../../src/dbt/jinja.ts';
import { slackTextOfNewCode } from '../alerts/fixture.ts';
import { startReceiver } from '../alerts/receiver.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { refsync, syncSandbox } from '../reader/fixture.ts';

const t = useTestDatabase();
let sb: Sandbox;
beforeAll(async () => {
  sb = await useSandbox();
});

/**
 * Renders each text with jinja2 as dbt configures it (the `do` extension on), every dbt function
 * a trap that records its call. Returns what each text rendered to and the calls made.
 */
function renderJinja(texts: string[]): { out: string[]; calls: string[] } {
  const script = `
import json, sys
from jinja2 import Environment, StrictUndefined
calls = []
def trap(name):
    def f(*args, **kwargs):
        calls.append(name)
        return 'CALLED-' + name
    return f
env = Environment(undefined=StrictUndefined, extensions=['jinja2.ext.do'])
names = ['env_var', 'run_query', 'var', 'ref', 'source', 'log', 'return', 'adapter']
out = []
for text in json.load(sys.stdin):
    try:
        out.append(env.from_string(text).render(**{n: trap(n) for n in names}))
    except Exception as e:
        out.append('JINJA ERROR: %s: %s' % (type(e).__name__, e))
print(json.dumps({'out': out, 'calls': calls}))
`;
  const r = spawnSync('python3', ['-c', script], { input: JSON.stringify(texts), encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`python3 with jinja2 is needed (Debian: python3-jinja2): ${r.stderr || r.error?.message}`);
  return JSON.parse(r.stdout) as { out: string[]; calls: string[] };
}

/** Every string of a parsed YAML document. */
function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsOf);
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => [k, ...stringsOf(v)]);
  return [];
}

const hostileFields = [
  "{{ env_var('PGPASSWORD') }}",
  "{% do run_query('drop schema refdata cascade') %}",
  '{# hides the rest #}',
  "{{{{ var('x') }}}}",
  "{%- set x = env_var('HOME') -%}{{ x }}",
  "{{ '{{' }} already escaped {{ '}}' }}",
  'a {  { b } c {{',
];

describe('dbt export: upstream strings are inert Jinja', () => {
  it('inertJinja: jinja2 renders every hostile text back to itself and calls nothing', () => {
    const texts = [...hostileFields, 'plain', '{', '{{', '{%', '{#', '}}', '{{{', 'x{#y'];
    const { out, calls } = renderJinja(texts.map(inertJinja));
    expect(calls).toEqual([]);
    expect(out).toEqual(texts);
  });

  it('refsync export-dbt after a sync of fields named like Jinja: every string of the file renders to itself, no call is made', async () => {
    await syncSandbox(t.db, sb, ['hazmat']);
    const entry: Record<string, unknown> = { code: 'UN9999', description: 'hostile fields' };
    for (const [i, field] of hostileFields.entries()) entry[field] = i;
    sb.control.addEntry('hazmat', entry);
    await syncSandbox(t.db, sb, ['hazmat']);
    const exported = await refsync(['export-dbt'], { DATABASE_URL: t.url });
    expect(exported.stderr).toBe('');
    expect(exported.code).toBe(0);
    const strings = stringsOf(parse(exported.stdout));
    // The hostile names did reach the file (as descriptions of typed columns)...
    for (const field of hostileFields) {
      expect(
        strings.some((s) => s.includes(inertJinja(JSON.stringify(field)))),
        field,
      ).toBe(true);
    }
    // ...and dbt, rendering it, prints them as served and runs nothing.
    const { out, calls } = renderJinja(strings);
    expect(calls).toEqual([]);
    expect(out.filter((o) => o.startsWith('JINJA ERROR'))).toEqual([]);
    for (const field of hostileFields)
      expect(
        out.some((o) => o.includes(JSON.stringify(field))),
        field,
      ).toBe(true);
  });
});

/** The Slack text split into what Slack formats (outside code spans) and the code spans. */
function spans(text: string): { outside: string; code: string[] } {
  const parts = text.split('`');
  expect(parts.length % 2, `unbalanced backticks in ${text}`).toBe(1);
  return { outside: parts.filter((_, i) => i % 2 === 0).join(' '), code: parts.filter((_, i) => i % 2 === 1) };
}

const hostile = 'see https://evil.example/x *bold* ~strike~ _it_ :skull: #general <!channel> <@U1> & `tick` ```block```\n> quote';

describe('Slack: upstream strings land in code spans', () => {
  const base: Omit<AlertRecord, 'kind' | 'payload'> = {
    id: 1,
    snapshotId: 1,
    runId: null,
    createdAt: new Date(),
    retriesFrom: new Date(),
    attempts: 0,
    environment: 'production',
    listKey: 'hazmat',
    variant: '',
  };
  const payloads: Array<[string, Record<string, unknown>]> = [
    ['added', { count: 2, entries: [{ code: hostile, description: hostile }, { entry_key: hostile }] }],
    ['modified', { count: 1, entries: [{ code: 'UN1', description: hostile }] }],
    ['failed', { error: hostile, error_code: 'http_status' }],
    ['schema_changed', { fields_added: [hostile, 'x'], fields_removed: [hostile], columns: [{ column: 'x_y_z', change: 'added', to: 'text' }] }],
    ['used_code_changed', { count: 1, impact: [{ code: hostile, change: 'removed', rows: 3, column: 'public.t.c' }] }],
  ];

  it.each(payloads)('%s: outside the spans no link, mention, markup or emoji of the upstream; inside no backtick or line break', (kind, payload) => {
    const body = JSON.parse(slackBody({ ...base, kind, payload })) as { text: string; unfurl_links: boolean; unfurl_media: boolean };
    expect(body).toMatchObject({ unfurl_links: false, unfurl_media: false });
    const { outside, code } = spans(body.text);
    expect(code.length).toBeGreaterThan(0);
    expect(outside).not.toMatch(/https?:|evil|bold|strike|skull|general|channel|tick|quote|[<>*~]/);
    for (const c of code) {
      expect(c).not.toMatch(/[\n\r<>]/);
      expect(c).not.toMatch(/&(?!amp;|lt;|gt;)/);
    }
    expect(body.text).toContain(
      'see https://evil.example/x *bold* ~strike~ _it_ :skull: #general &lt;!channel&gt; &lt;@U1&gt; &amp; \u02cbtick\u02cb \u02cb\u02cb\u02cbblock\u02cb\u02cb\u02cb &gt; quote',
    );
  });

  it('a sync whose entries carry mrkdwn: the delivered Slack text keeps each code and description in a span', async () => {
    const { text, kinds } = await slackTextOfNewCode(await startReceiver(), t.db, t.url, sb, {
      code: '*URGENT*',
      description: 'visit https://evil.example/pay ~now~',
    });
    expect(kinds).toEqual(['added']);
    expect(text).toContain('`*URGENT*` — `visit https://evil.example/pay ~now~`');
    expect(spans(text).outside).not.toMatch(/https?:|URGENT|now|[*~]/);
  });
});
