// refsync in a real terminal: `refsync sync` and `refsync status` run inside a tmux pane at 80,
// 100 and 120 columns, and the test reads the screen as a person sees it (capture-pane): the
// progress line is drawn in place, log lines never share a screen line with it, upstream text
// that tries to drive the terminal shows escaped, status lines never wrap, and NO_COLOR or a
// non-terminal gets no control sequence at all (the raw bytes, from pipe-pane and from files).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { sandboxEnv } from '../helpers/source.ts';
import { refsyncInPane, type Pane } from '../helpers/tmux.ts';
import { json, tinyServer, type TinyServer } from '../upstream/fixtures.ts';
import { testTempDir } from '../helpers/temp-dir.ts';

const t = useTestDatabase();
const dir = testTempDir('refsync-terminal');
let sb: Sandbox;
/** An upstream whose hazmat list answers 404 with a body that tries to clear the screen and set the title. */
let rogue: TinyServer;
let caFile: string;
const panes: Pane[] = [];
const hostile = '\u001b[2J\u001b]0;owned title\u0007\u009b31m\u202e';

beforeAll(async () => {
  sb = await useSandbox();
  rogue = await tinyServer((req, res) => {
    if (req.url === '/v2/auth/token/') return json(res, 200, { token: 'rogue-token-0123456789' });
    json(res, 404, { detail: `Not found ${hostile}` });
  });
  caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, [sb.caPem, rogue.caPem].join('\n'));
});
afterEach(async () => {
  await Promise.all(panes.splice(0).map((p) => p.close()));
  sb.control.reset();
});
afterAll(async () => {
  await rogue?.close();
});

const envFor = (environment: string, extra: Record<string, string> = {}) =>
  sandboxEnv(sb, { DATABASE_URL: t.url, REFSYNC_CA_FILE: caFile, REFSYNC_ENVIRONMENT: environment, ...extra });

async function pane(args: string[], options: Parameters<typeof refsyncInPane>[1]): Promise<Pane> {
  const p = await refsyncInPane(args, options);
  panes.push(p);
  return p;
}

/** A slow nmfc_codes: 2,000 entries in 20 pages of 100, each answer 150 ms late, so the progress line has time to move. */
function slowNmfc(): void {
  sb.control.setGenerated('nmfc_codes', 2_000);
  sb.control.setPaging('nmfc_codes', 'envelope', { defaultPageSize: 100, maxPageSize: 100 });
  sb.control.setLatency(150);
}

/** A frame of the progress line: the list, then its pages and entries so far (the finished line reads `pages    20  entries ...`). */
const progressFrame = /nmfc_codes .*\d+(\/\d+)? pages [\d,]+ entries/;
/** Escapes shown as text instead of acting: what the stream-wide guard used to print. */
const escapedOwnControls = /\\u001b\[K|\\u000d/;

describe('refsync sync in a terminal', () => {
  it.each([80, 100, 120])('at %i columns: the progress line moves in place, and a log line gets a line of its own', async (columns) => {
    slowNmfc();
    const environment = `tmux-sync-${columns}`;
    const p = await pane(['sync', '--list', 'nmfc_codes,hazmat'], { columns, env: envFor(environment, { REFSYNC_LISTS: 'nmfc_codes,hazmat' }) });
    const frames = new Set<string>();
    let faultSet = false;
    let exited: number | undefined;
    void p.exited().then((code) => (exited = code));
    while (exited === undefined) {
      const screen = await p.screen({ joined: true });
      const progress = screen.filter((l) => progressFrame.test(l));
      // Drawn in place: never more than one frame on the screen, always the last line written.
      expect(progress.length, screen.join('\n')).toBeLessThanOrEqual(1);
      if (progress.length) {
        expect(screen.at(-1)).toBe(progress[0]);
        expect(progress[0]!.length).toBeLessThan(columns);
        frames.add(progress[0]!);
        if (!faultSet) {
          // One page now fails once: the client logs a warning and retries, while the line is drawn.
          sb.control.setFaults({ errorCount: 1, paths: ['nmfc_codes'] });
          faultSet = true;
        }
      }
      for (const line of screen) expect(line, 'an escaped control of the program itself').not.toMatch(escapedOwnControls);
      await new Promise((r) => setTimeout(r, 40));
    }
    expect(exited).toBe(0);
    expect(frames.size, 'distinct frames of the progress line seen').toBeGreaterThanOrEqual(2);
    const screen = await p.screen({ joined: true });
    expect(screen[0]).toBe('pane ready');
    // The log line starts its own line; nothing was drawn before it on that line, and no frame remains.
    const logs = screen.filter((l) => l.includes('"level"'));
    expect(
      logs.some((l) => l.includes('retrying')),
      screen.join('\n'),
    ).toBe(true);
    for (const log of logs) expect(log).toMatch(/^\{"level":\d+,.*\}$/);
    expect(screen.filter((l) => progressFrame.test(l))).toEqual([]);
    expect(screen.filter((l) => /^changed +nmfc_codes +pages +20 +entries +2000 +first load/.test(l))).toHaveLength(1);
    expect(screen.at(-1)).toMatch(/^run \d+ \(tmux-sync-\d+\): succeeded — 2 changed/);
    for (const line of screen) expect(line).not.toMatch(escapedOwnControls);
  });

  it('upstream text that tries to clear the screen and set the title shows escaped, and does neither', async () => {
    const p = await pane(['sync', '--list', 'hazmat'], { columns: 120, env: envFor('tmux-rogue', { REFSYNC_BASE_URL: rogue.url, REFSYNC_LISTS: 'hazmat' }) });
    expect(await p.exited()).toBe(1);
    const screen = await p.screen({ joined: true });
    expect(screen[0], 'the screen was cleared').toBe('pane ready');
    expect(screen.find((l) => l.startsWith('unavailable'))).toMatch(/404: Not found \\u001b\[2J\\u001b\]0;owned title\\u0007\\u009b31m\\u202e$/);
    expect(await p.show('#{pane_title}')).not.toContain('owned title');
  });

  it('NO_COLOR on a terminal: no control sequence at all, only text and line ends', async () => {
    slowNmfc();
    const p = await pane(['sync', '--list', 'nmfc_codes'], {
      columns: 100,
      recordRaw: true,
      env: envFor('tmux-nocolor', { REFSYNC_LISTS: 'nmfc_codes', NO_COLOR: '1', LOG_LEVEL: 'info' }),
    });
    expect(await p.exited()).toBe(0);
    const raw = await settledRaw(p, /succeeded/);
    expect(raw.includes(0x1b), 'an escape byte').toBe(false);
    // The terminal turns each newline into CR LF; a carriage return of the program's own would stand alone.
    expect(raw.toString('latin1').replace(/\r\n/g, '\n')).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
    expect(raw.toString('utf8')).toMatch(/changed +nmfc_codes/);
  });

  it('without NO_COLOR the same run draws its line with carriage return and erase-line (what NO_COLOR leaves out)', async () => {
    slowNmfc();
    const p = await pane(['sync', '--list', 'nmfc_codes'], { columns: 100, recordRaw: true, env: envFor('tmux-color', { REFSYNC_LISTS: 'nmfc_codes' }) });
    expect(await p.exited()).toBe(0);
    expect((await settledRaw(p, /succeeded/)).toString('latin1')).toMatch(/\r\u001b\[Ksandbox nmfc_codes|\r\u001b\[Ktmux-color nmfc_codes/);
  });

  it('stdout and stderr not a terminal: no control sequence, not even a carriage return', async () => {
    slowNmfc();
    const p = await pane(['sync', '--list', 'nmfc_codes'], {
      columns: 100,
      redirect: '>"$0.out" 2>"$0.err"',
      env: envFor('tmux-pipe', { REFSYNC_LISTS: 'nmfc_codes', LOG_LEVEL: 'info' }),
    });
    expect(await p.exited()).toBe(0);
    const out = readFileSync(`${p.file('run.sh')}.out`);
    const err = readFileSync(`${p.file('run.sh')}.err`);
    expect(out.toString()).toMatch(/changed +nmfc_codes/);
    expect(err.toString()).toMatch(/"level":30/);
    for (const bytes of [out, err]) expect(bytes.toString('latin1')).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
  });
});

describe('refsync status in a terminal', () => {
  beforeAll(async () => {
    // A synced source with a failed list whose reason holds the hostile text (the rogue upstream).
    const env = envFor('tmux-status', {
      REFSYNC_LISTS: 'hazmat,accessorials,carrier_package_types,charge_codes',
      REFSYNC_CHARGE_CODE_VERSIONS: '2024-06-11,unpinned',
    });
    const p = await pane(['sync'], { columns: 120, env });
    expect(await p.exited()).toBe(0);
    const q = await pane(['sync', '--list', 'hazmat'], { columns: 120, env: { ...env, REFSYNC_BASE_URL: rogue.url } });
    expect(await q.exited()).toBe(1);
    await Promise.all(panes.splice(0).map((x) => x.close()));
  });

  it.each([80, 100, 120])('at %i columns: one screen line per target, none wrapped, ages relative, hostile text escaped', async (columns) => {
    const p = await pane(['status'], { columns, env: envFor('tmux-status') });
    expect(await p.exited()).toBe(0);
    const screen = await p.screen();
    // Had any line wrapped, joining wrapped lines would give fewer lines than the screen holds.
    expect(await p.screen({ joined: true })).toEqual(screen);
    // The database holds the other tests' environments too: this source's part runs to the next blank line.
    const start = screen.findIndex((l) => l.startsWith('tmux-status (tmux-status): run '));
    expect(start, screen.join('\n')).toBeGreaterThan(0);
    const section = screen.slice(start, screen.indexOf('', start));
    const targets = ['accessorials', 'carrier_package_types dhl', 'carrier_package_types fedex', 'charge_codes 2024-06-11', 'charge_codes unpinned', 'hazmat'];
    for (const name of targets)
      expect(
        section.filter((l) => l.startsWith(`${name} `)),
        name,
      ).toHaveLength(1);
    const hazmat = section.find((l) => l.startsWith('hazmat '))!;
    expect(hazmat).toMatch(/^hazmat +unavailable +(just now|\d+ s ago|\d+ min ago) +.*404: Not found /);
    if (columns >= 100) expect(hazmat).toContain('404: Not found \\u001b[2J');
    expect(screen[0], 'the screen was cleared').toBe('pane ready');
    expect(await p.show('#{pane_title}')).not.toContain('owned title');
  });

  it('--list KEY: the reason in full, escaped, with the command that syncs it again', async () => {
    const p = await pane(['status', '--list', 'hazmat', '--source', 'tmux-status'], { columns: 80, env: envFor('tmux-status') });
    expect(await p.exited()).toBe(0);
    const screen = await p.screen();
    expect(await p.screen({ joined: true })).toEqual(screen);
    const text = screen.join('\n').replace(/\n {15}/g, ' ');
    expect(text).toContain('  reason       GET /v2/shipments/hazmat/ page 1: 404: Not found \\u001b[2J\\u001b]0;owned title\\u0007\\u009b31m\\u202e');
    expect(text).toContain('  resolve      refsync sync --list hazmat');
  });
});

/** The raw recording once it holds `done` (pipe-pane's cat may lag the command's exit a little). */
async function settledRaw(p: Pane, done: RegExp): Promise<Buffer> {
  for (let i = 0; i < 100 && !done.test(p.raw().toString('utf8')); i++) await new Promise((r) => setTimeout(r, 50));
  return p.raw();
}
