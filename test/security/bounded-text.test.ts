// Text from the upstream is bounded in bytes wherever refsync stores or sends it,
// and a run whose every list fails with a long hostile error body still closes: the run row leaves
// `running`, the refdata_runs NOTIFY arrives (with the run id and what fits under Postgres's
// 8000-byte limit), and the run_completed alert is written and delivered (to the log, the channel of a command without a webhook). The bodies are those that
// grow once encoded: control characters (6 bytes each in JSON) and 4-byte characters.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxFaults } from '../../src/sandbox/types.ts';
import { NOTIFY_LIMIT, runNotice, type RunCompleted } from '../../src/sync/run/runs.ts';
import { cutToBytes, cutToChars, jsonTextBytes } from '../../src/util/bounded-text.ts';
import { alertFixture, VERSION } from '../alerts/fixture.ts';
import { runCli } from '../helpers/cli.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { sandboxEnv } from '../helpers/source.ts';

const t = useTestDatabase();
let sb: Sandbox;
let listener: pg.Client;
const notices: string[] = [];

beforeAll(async () => {
  sb = await useSandbox();
  listener = new pg.Client({ connectionString: t.url });
  await listener.connect();
  listener.on('notification', (n) => {
    if (n.channel === 'refdata_runs') notices.push(n.payload ?? '');
  });
  await listener.query('listen refdata_runs');
});
afterAll(async () => {
  await listener?.end();
});

/** Every code point from U+0001 to U+001F but tab, newline and the other whitespace a summary collapses. */
const controls = Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1))
  .filter((c) => !/\s/.test(c))
  .join('');
const controlBody = controls.repeat(Math.ceil(300 / controls.length)).slice(0, 300);
const emoji = '\u{1F4E6}\u{1F69A}\u{1F9FE}';
const emojiBody = emoji.repeat(100);

const hostileBodies: Array<[string, SandboxFaults['errorBody']]> = [
  ['404 with 300 control characters as text', { status: 404, body: controlBody }],
  ['404 with 300 control characters in a JSON detail', { status: 404, body: JSON.stringify({ detail: controlBody }), contentType: 'application/json' }],
  ['400 with 300 four-byte characters as text', { status: 400, body: emojiBody }],
  [
    '404 with 300 four-byte characters in a JSON error',
    { status: 404, body: JSON.stringify({ error: emojiBody, detail: emojiBody }), contentType: 'application/json' },
  ],
];

/** Waits until the NOTIFY about `runId` arrived; fails the test when it never does. */
async function noticeOf(runId: number): Promise<Record<string, unknown>> {
  for (let i = 0; i < 200; i++) {
    const found = notices.map((n) => JSON.parse(n) as Record<string, unknown>).find((n) => n.run_id === runId);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`no refdata_runs NOTIFY for run ${runId}; received: ${notices.join(' | ').slice(0, 500)}`);
}

let envSeq = 0;

describe('every list failing with a long hostile error body', () => {
  it.each(hostileBodies)('%s: the run closes, its NOTIFY and run_completed alert arrive, every stored text is bounded in bytes', async (_name, errorBody) => {
    sb.control.setFaults({ errorBody });
    const environment = `bounded-${process.pid}-${++envSeq}`;
    const env = sandboxEnv(sb, {
      REFSYNC_ENVIRONMENT: environment,
      REFSYNC_ALERT_ON: 'failed,run_completed',
      DATABASE_URL: t.url,
      LOG_LEVEL: 'info',
    });
    let output = '';
    try {
      const r = await runCli(['sync'], { env });
      output = r.stdout + r.stderr;
      expect(r.code, output.slice(-2000)).toBe(1);
      expect(output).not.toMatch(/payload string too long/);
    } finally {
      sb.control.clearFaults();
    }

    const { rows: runs } = await t.db.query<{ id: number; status: string; targets_total: number; targets_done: number; error: string; bytes: number }>(
      `select id::int, status, targets_total, targets_done, error, octet_length(error) as bytes from refdata.sync_runs where environment = $1`,
      [environment],
    );
    expect(runs).toHaveLength(1);
    const run = runs[0]!;
    expect(run.status).toBe('failed');
    expect(run.targets_done).toBe(run.targets_total);
    expect(run.targets_total).toBeGreaterThan(15);
    expect(jsonTextBytes(run.error)).toBeLessThanOrEqual(4000);
    expect(run.error).toMatch(/ of \d+ targets did not sync: /);

    // Every snapshot's error is bounded in bytes, and whole code points (no U+FFFD from a split pair).
    const { rows: snapshots } = await t.db.query<{ error: string }>(`select error from refdata.snapshots where run_id = $1`, [run.id]);
    expect(snapshots).toHaveLength(run.targets_total);
    for (const s of snapshots) {
      expect(jsonTextBytes(s.error)).toBeLessThanOrEqual(2000);
      expect(s.error).not.toContain('\ufffd');
    }

    const notice = await noticeOf(run.id);
    expect(notice).toMatchObject({ run_id: run.id, status: 'failed', environment });
    expect(Buffer.byteLength(JSON.stringify(notice))).toBeLessThan(8000);

    // The run_completed alert was written in the transaction that closed the run, and is delivered.
    const { rows: alerts } = await t.db.query<{ kind: string; bytes: number }>(
      `select kind, octet_length(payload::text) as bytes from refdata.alerts where environment = $1 order by id`,
      [environment],
    );
    expect(alerts.filter((a) => a.kind === 'run_completed')).toHaveLength(1);
    for (const a of alerts) expect(a.bytes).toBeLessThan(16_000);
    // ...and delivered by the command itself to its channel (no webhook set: the log).
    const logged = output.split('\n').filter((l) => l.includes('"kind":"run_completed"'));
    expect(logged, output.slice(-2000)).toHaveLength(1);
    expect(logged[0]).toContain(`run ${run.id} of `);
  });
});

describe('alert payloads', () => {
  it('an added entry with a 300 KB description of control and 4-byte characters: the alert names it, cut to 1000 bytes', async () => {
    const fx = alertFixture(t.db, t.url, sb);
    try {
      await fx.sync();
      const description = (controls + emoji).repeat(6000);
      sb.control.addEntry('charge_codes', { code: 'HUGE1', description }, { version: VERSION });
      await fx.sync();
      const { rows } = await t.db.query<{ bytes: number; payload: { entries: Array<{ code: string; description: string }> } }>(
        `select octet_length(payload::text) as bytes, payload from refdata.alerts where environment = $1 and kind = 'added'`,
        [fx.source.environment],
      );
      expect(rows).toHaveLength(1);
      const named = rows[0]!.payload.entries[0]!;
      expect(named.code).toBe('HUGE1');
      expect(jsonTextBytes(named.description)).toBeLessThanOrEqual(1000);
      expect(named.description.endsWith('…')).toBe(true);
      expect(description.startsWith(named.description.slice(0, -1))).toBe(true);
      expect(rows[0]!.bytes).toBeLessThan(2000);
      // The entry itself is stored whole: only the alert's copy is a digest.
      const { rows: stored } = await t.db.query<{ n: number }>(
        `select length(description) as n from refdata.current_entries where environment = $1 and code = 'HUGE1'`,
        [fx.source.environment],
      );
      expect(stored[0]!.n).toBe(Array.from(description).length);
    } finally {
      await fx.close();
    }
  });
});

describe('the byte bounds themselves', () => {
  const payload = (error: string, lists = 0): RunCompleted => ({
    run_id: 7,
    source: 's',
    environment: 'e',
    trigger: 'cli',
    slot: null,
    status: 'failed',
    started_at: '2026-01-01T00:00:00Z',
    finished_at: '2026-01-01T00:00:01Z',
    targets_total: lists,
    targets_done: lists,
    targets_failed: lists,
    error,
    lists: Array.from({ length: lists }, (_, i) => ({
      list_key: `list_${i}`,
      variant: '',
      status: 'failed',
      snapshot_id: i,
      entries: null,
      added: 0,
      removed: 0,
      modified: 0,
      reappeared: 0,
      reshaped: 0,
      error_code: 'http_status',
    })),
  });

  it.each([
    ['short', 'x', 0],
    ['control characters', '\u0001'.repeat(4000), 30],
    ['4-byte characters', '\u{1F4E6}'.repeat(4000), 30],
    ['quotes and backslashes', '"\\'.repeat(4000), 300],
  ])('a run notice of %s stays under the NOTIFY limit and keeps the run id', (_name, error, lists) => {
    const notice = runNotice(payload(error as string, lists as number));
    expect(Buffer.byteLength(notice)).toBeLessThanOrEqual(NOTIFY_LIMIT);
    expect(JSON.parse(notice)).toMatchObject({ run_id: 7, status: 'failed' });
  });

  it('cuts at whole code points, within the bytes as JSON text', () => {
    for (const [text, max] of [
      ['\u{1F4E6}'.repeat(50), 101],
      ['\u0001'.repeat(50), 100],
      ['a\u00e9'.repeat(50), 50],
    ] as const) {
      const cut = cutToBytes(text, max);
      expect(jsonTextBytes(cut)).toBeLessThanOrEqual(max);
      expect(cut.endsWith('…')).toBe(true);
      expect(cut.isWellFormed()).toBe(true);
      expect(text.startsWith(cut.slice(0, -1))).toBe(true);
    }
    expect(cutToBytes('short', 10)).toBe('short');
    expect(cutToChars('\u{1F4E6}'.repeat(10), 4)).toBe('\u{1F4E6}'.repeat(3) + '…');
  });
});
