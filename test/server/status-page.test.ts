// What operators see of the targets' state: the status page at `/` in a real browser (Debian's
// Chromium driven by playwright-core, no browser download) and the per-target gauges of /metrics.
// The page must show each list's state, run no upstream text as code, load every asset, and trip no
// Content-Security-Policy violation; the bull-board dashboard is loaded the same way. The browser
// test is skipped, saying so, where no Chromium is installed.
import { existsSync, mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../src/sandbox/types.ts';
import { runSync } from '../../src/sync/run/run-sync.ts';
import { createUpstreamClient } from '../../src/upstream/factory.ts';
import { testQueuePrefix, useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { onCleanup, startTestWorker, workerConfig } from '../queue/helpers.ts';

const CHROMIUM = '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) console.warn(`[status page] browser test skipped: no Chromium at ${CHROMIUM} (apt-get install chromium; .ci/run does)`);

const tdb = useTestDatabase();
const PASSWORD = 'page-pass';
// Upstream text that would run as code if any interpolation were left unescaped.
const MARKUP = `<script>window.__injected = 1</script><img src="x" onerror="window.__injected = 2">Reefer`;

/** A page that records every failed or refused request, console error and CSP violation. */
async function watchedPage(context: BrowserContext) {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  // Browser-side code as text: this project's TypeScript has no DOM types.
  await page.addInitScript({
    content: "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI))",
  });
  return { page, problems };
}

const rowText = (page: Page, list: string) => page.locator('section.source tbody tr', { has: page.locator(`td:text-is("${list}")`) }).innerText();

/**
 * Three syncs leave equipment_types changed (an entry's name carrying markup), accessorials held
 * (a mass removal) and shipment_modes failed twice in a row; then a worker serves the result.
 */
async function syncedWorker() {
  const sb = await useSandbox();
  const config = workerConfig(sb, tdb.url, {
    REFSYNC_ENVIRONMENT: 'page-env',
    REFSYNC_LISTS: 'shipment_modes,equipment_types,accessorials',
    REFSYNC_DASHBOARD_PASSWORD: PASSWORD,
  });
  const source = config.sources[0]!;
  const client = createUpstreamClient(source, undefined, { retry: { attempts: 1, baseDelayMs: 5, maxDelayMs: 20 } });
  onCleanup(() => client.close());
  const sync = (lists?: Array<'shipment_modes'>) =>
    runSync({ db: tdb.db, sources: [source], clientFor: () => client, trigger: 'cli', ...(lists ? { lists } : {}) });

  await sync();
  sb.control.modifyEntry('equipment_types', 'REEFER', { name: MARKUP });
  sb.control.setEntries('accessorials', sb.control.getEntries('accessorials').slice(0, 1) as Entry[]);
  sb.control.setFaults({ duplicateKey: { list: 'shipment_modes', mode: 'conflicting' } });
  await sync();
  await sync(['shipment_modes']);

  const latest = async (list: string) =>
    (
      await tdb.db.query<{ status: string; error: string | null; entry_count: number | null }>(
        `select status, error, entry_count from refdata.snapshots where list_key = $1 order by id desc limit 1`,
        [list],
      )
    ).rows[0]!;
  const [failed, held, reefer] = [await latest('shipment_modes'), await latest('accessorials'), await latest('equipment_types')];
  expect([failed.status, held.status, reefer.status]).toEqual(['failed', 'held', 'ok']);

  const worker = await startTestWorker(config, testQueuePrefix());
  return { base: `http://127.0.0.1:${worker.http.port}`, failed, reefer };
}

let fixture: ReturnType<typeof syncedWorker> | undefined;
const synced = () => (fixture ??= syncedWorker());

describe('per-target gauges', () => {
  it('/metrics says which target is held and how many times in a row one failed, and which build runs', async () => {
    const { base } = await synced();
    const text = await (await fetch(`${base}/metrics`)).text();
    const labels = (list: string) => `{source="page-env",list="${list}",variant=""}`;
    // Held by a mass removal: the reason label says which accept command applies it.
    expect(text).toContain(`refsync_list_held${labels('accessorials').replace('}', ',reason="removals"}')} 1\n`);
    expect(text).toContain(`refsync_list_held${labels('shipment_modes').replace('}', ',reason=""}')} 0\n`);
    expect(text).toContain(`refsync_list_consecutive_failures${labels('shipment_modes')} 2\n`);
    expect(text).toContain(`refsync_list_consecutive_failures${labels('equipment_types')} 0\n`);
    expect(text).toContain(`refsync_build_info{version="0.1.0",node="${process.version}"} 1\n`);
    // Default process metrics under their stock names, so ready-made Node.js dashboards match.
    expect(text).toMatch(/^process_cpu_seconds_total \d/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds \d/m);
    expect(text).not.toContain('refsync_process_');
  });
});

describe.skipIf(!haveChromium)('status page in Chromium', () => {
  it('shows every list with its last sync, the held list with its command, the failure reason and the changes, as text', async () => {
    const { base, failed, reefer } = await synced();
    const plain = await fetch(`${base}/`);
    expect(plain.status).toBe(401);
    const authed = await fetch(`${base}/`, { headers: { authorization: `Basic ${btoa(`admin:${PASSWORD}`)}` } });
    expect(authed.status).toBe(200);
    expect(authed.headers.get('content-security-policy')).toBe("default-src 'self'");
    expect(authed.headers.get('x-content-type-options')).toBe('nosniff');

    const dir = mkdtempSync(join(tmpdir(), 'refsync-status-page-'));
    // The screenshots stay for a look; the browser profile goes (after the browser closed: cleanups run in reverse).
    onCleanup(() => rm(join(dir, 'profile'), { recursive: true, force: true }));
    const context = await chromium.launchPersistentContext(join(dir, 'profile'), {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      httpCredentials: { username: 'admin', password: PASSWORD },
    });
    onCleanup(() => context.close());

    const { page, problems } = await watchedPage(context);
    const response = await page.goto(`${base}/`, { waitUntil: 'networkidle' });
    expect(response!.status()).toBe(200);
    expect(await page.title()).toBe('refsync status');
    // The stylesheet applied (same origin, allowed by the CSP): the held section has its border.
    expect(await page.evaluate("getComputedStyle(document.querySelector('#held')).borderLeftStyle")).toBe('solid');

    await expect.poll(() => page.locator('section.source h2').innerText()).toContain('Source page-env');
    const reeferRow = await rowText(page, 'equipment_types');
    expect(reeferRow).toMatch(/\tok\t/);
    expect(reeferRow).toContain(`\t${reefer.entry_count}\t0\t0\t1\t`);
    const heldRow = await rowText(page, 'accessorials');
    expect(heldRow).toMatch(/\theld\t/);
    const failedRow = await rowText(page, 'shipment_modes');
    expect(failedRow).toMatch(/\tfailed\t/);
    expect(failedRow).toContain(`\t2\t`);
    const reason = failed.error!.split('\n')[0]!;
    expect(failedRow).toContain(reason);
    expect(await page.locator('#failures tbody tr').count()).toBe(2);
    expect(await page.locator('#failures').innerText()).toContain(reason);

    const held = await page.locator('#held').innerText();
    expect(held).toContain('accessorials');
    expect(await page.locator('#held code.command').innerText()).toBe('refsync sync --list accessorials --accept-removals');

    // The entry's markup is shown as text and nothing of it ran or rendered as an element.
    expect(await page.locator('#changes').innerText()).toContain(MARKUP);
    expect(await page.evaluate('window.__injected')).toBeUndefined();
    expect(await page.locator('main img, main script').count()).toBe(0);
    expect(await page.locator('script').count()).toBe(0);

    await page.screenshot({ path: join(dir, 'status-page.png'), fullPage: true });
    console.log(`[status page] screenshot: ${join(dir, 'status-page.png')}`);
    expect(problems).toEqual([]);

    const board = await watchedPage(context);
    await board.page.goto(`${base}/admin/queues`, { waitUntil: 'networkidle' });
    expect(await board.page.title()).toBe('refsync');
    await expect.poll(() => board.page.locator('body').innerText()).toContain('sync');
    await board.page.screenshot({ path: join(dir, 'admin-queues.png'), fullPage: true });
    expect(board.problems).toEqual([]);
  });
});
