// docs/alerts.md, followed as a user would: a secret from `refsync webhook-secret`, the page's own
// receiver (verify.mjs and receiver.mjs, as written there) run as a process, refsync refused until
// REFSYNC_WEBHOOK_ALLOW_PRIVATE is set, a baseline sync, the page's sandbox call adding a code,
// and a second sync whose `added` alert the receiver verifies. Then a replay (`refsync alerts
// retry`) to the same receiver using the page's library version of verify.mjs: same webhook-id,
// verified again. Forged deliveries are refused by both versions.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { sandboxControlHttp, useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { sandboxEnv } from '../helpers/source.ts';
import { onFreePort } from '../queue/helpers.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const page = readFileSync(join(root, 'docs/alerts.md'), 'utf8');
/** The page's blocks marked `<!-- test: NAME -->`, by name. */
const blocks = new Map([...page.matchAll(/<!-- test: (\S+) -->\n```\w+\n([\s\S]*?)```/g)].map((m) => [m[1]!, m[2]!]));
const block = (name: string) => {
  const text = blocks.get(name);
  if (text === undefined) throw new Error(`docs/alerts.md has no block marked <!-- test: ${name} -->`);
  return text;
};

const t = useTestDatabase();
let sb: Sandbox;
// Under the checkout, so that the library version's `import 'standardwebhooks'` resolves as in a user's project.
const work = join(root, 'test-artifacts', `docs-alerts-${process.pid}`);
const receivers: ChildProcess[] = [];

beforeAll(async () => {
  sb = await useSandbox();
});

afterAll(() => {
  for (const r of receivers) r.kill();
  rmSync(work, { recursive: true, force: true });
});

/** The page's receiver.mjs with one of its verify.mjs, started as `node receiver.mjs`; its output lines. */
async function startReceiver(folder: string, verifyBlock: string, secret: string): Promise<{ port: number; lines: string[] }> {
  const dir = join(work, folder);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'verify.mjs'), block(verifyBlock));
  writeFileSync(join(dir, 'receiver.mjs'), block('receiver.mjs'));
  // Started again on another port when it cannot listen on the one freePort saw free a moment before.
  return onFreePort('the receiver', async (port) => {
    const child = spawn(process.execPath, ['receiver.mjs'], { cwd: dir, env: { PATH: process.env.PATH, REFSYNC_WEBHOOK_SECRET: secret, PORT: String(port) } });
    receivers.push(child);
    const lines: string[] = [];
    child.stdout.setEncoding('utf8').on('data', (d: string) => lines.push(...d.trim().split('\n')));
    child.stderr.setEncoding('utf8').on('data', (d: string) => lines.push(`stderr: ${d}`));
    const listening = `listening on http://127.0.0.1:${port}/hook`;
    await expect.poll(() => lines.includes(listening) || child.exitCode !== null, { timeout: 10_000 }).toBe(true);
    return lines.includes(listening) ? { port, lines } : undefined;
  });
}

/** A delivery signed with another secret: every verify must refuse it. */
async function forged(port: number): Promise<number> {
  const body = JSON.stringify({ type: 'refdata.added', timestamp: new Date().toISOString(), data: {} });
  const id = 'msg_forged';
  const timestamp = String(Math.floor(Date.now() / 1000));
  const mac = createHmac('sha256', randomBytes(32)).update(`${id}.${timestamp}.${body}`).digest('base64');
  const res = await fetch(`http://127.0.0.1:${port}/hook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${mac}` },
    body,
  });
  return res.status;
}

const verifiedLine = (lines: string[]) => lines.find((l) => l.startsWith('verified '));

describe('docs/alerts.md, followed as written', () => {
  it('ends in a verified delivery, and a replay verified with the library', async () => {
    const made = await runCli(['webhook-secret']);
    expect(made.code).toBe(0);
    const secret = made.stdout.trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);

    const hand = await startReceiver('by-hand', 'verify.mjs', secret);
    const env = sandboxEnv(sb, {
      DATABASE_URL: t.url,
      REFSYNC_LISTS: 'charge_codes',
      REFSYNC_WEBHOOK_SECRET: secret,
      REFSYNC_WEBHOOK_URL: `http://127.0.0.1:${hand.port}/hook`,
    });

    // Step 3: refused, naming the setting that allows it; a bad secret names the command that makes one.
    const refused = await runCli(['sync'], { env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('REFSYNC_WEBHOOK_URL: must be https://; http:// is allowed only with REFSYNC_WEBHOOK_ALLOW_PRIVATE=true');
    const badSecret = await runCli(['sync'], { env: { ...env, REFSYNC_WEBHOOK_ALLOW_PRIVATE: 'true', REFSYNC_WEBHOOK_SECRET: 'my-secret' } });
    expect(badSecret.code).toBe(2);
    expect(badSecret.stderr).toContain('make one with `refsync webhook-secret`');
    const allowed = { ...env, REFSYNC_WEBHOOK_ALLOW_PRIVATE: 'true' };

    // Step 4: a baseline alerts nothing; the page's sandbox call adds a code; the next sync alerts it.
    expect((await runCli(['sync'], { env: allowed })).code).toBe(0);
    const curl = block('add-entry');
    const [, method, payload] = curl.match(/__sandbox\/(\w+)[\s\S]*?-d '([^']+)'/)!;
    expect((await sandboxControlHttp(sb, method!, JSON.parse(payload!))).status).toBe(200);
    const second = await runCli(['sync'], { env: allowed });
    expect(second.code, second.stderr).toBe(0);
    await expect.poll(() => verifiedLine(hand.lines)).toBeDefined();
    expect(hand.lines.filter((l) => l.startsWith('verified '))).toHaveLength(1);
    const [, webhookId, type, data] = verifiedLine(hand.lines)!.match(/^verified (\S+) (\S+) (.*)$/)!;
    expect(type).toBe('refdata.added');
    expect(JSON.parse(data!)).toMatchObject({
      kind: 'added',
      list_key: 'charge_codes',
      count: 1,
      entries: [{ code: 'EVCH', description: 'Electric vehicle charging' }],
    });
    expect(await forged(hand.port)).toBe(401);

    const listed = JSON.parse((await runCli(['alerts', '--json'], { env: allowed })).stdout) as Array<{
      id: number;
      kind: string;
      state: string;
      webhookId: string;
    }>;
    const added = listed.find((a) => a.kind === 'added')!;
    expect(added).toMatchObject({ state: 'delivered', webhookId });

    // A replay, to the same receiver with the library's verify.mjs: the same webhook-id, signed afresh.
    const library = await startReceiver('with-library', 'verify-with-library.mjs', secret);
    expect(await forged(library.port)).toBe(401);
    const retried = await runCli(['alerts', 'retry', String(added.id)], { env: allowed });
    expect(retried).toMatchObject({ code: 0, stdout: `alert ${added.id} requeued (was delivered)\n` });
    const replayed = await runCli(['sync'], { env: { ...allowed, REFSYNC_WEBHOOK_URL: `http://127.0.0.1:${library.port}/hook` } });
    expect(replayed.code, replayed.stderr).toBe(0);
    await expect.poll(() => verifiedLine(library.lines)).toBeDefined();
    expect(verifiedLine(library.lines)).toMatch(new RegExp(`^verified ${webhookId} refdata\\.added `));
  }, 120_000);
});
