// What operators see of the targets' state: the status pages in a real browser (Debian's Chromium
// driven by playwright-core, no browser download) and the per-target gauges of /metrics. The pages
// (`/`, a list's, a run's) must show each list's state, link to each other, draw a list's history,
// run no upstream text as code, load every asset, trip no Content-Security-Policy violation, and
// fit a phone's 390 px without a sideways scroll; the bull-board dashboard is loaded the same way.
// Screenshots of every page at 1280 and 390 px are kept in test-artifacts/screenshots/ (CI keeps
// them as artefacts). The browser tests are skipped, saying so, where no Chromium is installed.
import { readFileSync } from 'node:fs';
import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { Entry } from '../../src/sandbox/types.ts';
import { runSync } from '../../src/sync/run/run-sync.ts';
import { createUpstreamClient } from '../../src/upstream/factory.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { haveChromium, keepScreenshot, launchLoggedInBrowser } from '../helpers/chromium.ts';
import { onCleanup, startTestWorker, workerConfig, testQueuePrefix } from '../queue/helpers.ts';

const haveBrowser = haveChromium('status page');

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

const rowText = (page: Page, list: string) => page.locator('section.source tbody tr', { has: page.getByRole('link', { name: list, exact: true }) }).innerText();

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

let browser: Promise<BrowserContext> | undefined;
const browserContext = () => (browser ??= launchLoggedInBrowser(PASSWORD, 'refsync-status-page'));

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
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(text).toContain(`refsync_build_info{version="${version}",node="${process.version}"} 1\n`);
    // Default process metrics under their stock names, so ready-made Node.js dashboards match.
    expect(text).toMatch(/^process_cpu_seconds_total \d/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds \d/m);
    expect(text).not.toContain('refsync_process_');
  });
});

describe.skipIf(!haveBrowser)('status page in Chromium', () => {
  it('shows every list with its last sync, the held list with its command, the failure reason and the changes, as text', async () => {
    const { base, failed, reefer } = await synced();
    const plain = await fetch(`${base}/`);
    expect(plain.status).toBe(401);
    const authed = await fetch(`${base}/`, { headers: { authorization: `Basic ${btoa(`admin:${PASSWORD}`)}` } });
    expect(authed.status).toBe(200);
    expect(authed.headers.get('content-security-policy')).toBe("default-src 'self'");
    expect(authed.headers.get('x-content-type-options')).toBe('nosniff');

    const context = await browserContext();
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
    // Failing now, twice in a row: one row of its own under "Failing now"; nothing has recovered.
    expect(await page.locator('#failing tbody tr').count()).toBe(1);
    expect(await page.locator('#failing').innerText()).toContain(reason);
    expect(await page.locator('#failures').count()).toBe(0);

    const held = await page.locator('#held').innerText();
    expect(held).toContain('accessorials');
    expect(await page.locator('#held code.command').innerText()).toBe('refsync sync --list accessorials --accept-removals');

    // The entry's markup is shown as text and nothing of it ran or rendered as an element.
    expect(await page.locator('#changes').innerText()).toContain(MARKUP);
    expect(await page.evaluate('window.__injected')).toBeUndefined();
    expect(await page.locator('main img, main script').count()).toBe(0);
    expect(await page.locator('script').count()).toBe(0);

    expect(problems).toEqual([]);

    const board = await watchedPage(context);
    await board.page.goto(`${base}/admin/queues`, { waitUntil: 'networkidle' });
    expect(await board.page.title()).toBe('refsync');
    await expect.poll(() => board.page.locator('body').innerText()).toContain('sync');
    await keepScreenshot(board.page, 'admin-queues');
    expect(board.problems).toEqual([]);
  });
});

/** What makes the page wider than the window (a sideways scroll): the elements reaching past it; none when it fits. */
const overflowing = (page: Page) =>
  page.evaluate(`document.documentElement.scrollWidth <= document.documentElement.clientWidth ? [] :
    [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
      .map((e) => e.tagName.toLowerCase() + (e.className ? '.' + e.className : '') + ' ' + Math.round(e.getBoundingClientRect().width) + 'px').slice(0, 8)`);

describe.skipIf(!haveBrowser)('list and run pages in Chromium, at 1280 and 390 px', () => {
  for (const width of [1280, 390]) {
    it(`at ${width} px: / links each list and the run; a list page draws its history and says what a held or failed list needs; a run page shows each list's outcome`, async () => {
      const { base, failed } = await synced();
      const { page, problems } = await watchedPage(await browserContext());
      await page.setViewportSize({ width, height: 900 });
      const visit = async (name: string) => {
        await page.waitForLoadState('networkidle');
        await keepScreenshot(page, `${width}-${name}`);
        expect(await overflowing(page), `${name} scrolls sideways at ${width} px`).toEqual([]);
      };

      await page.goto(`${base}/`, { waitUntil: 'networkidle' });
      const listLinks = page.locator('section.source td a');
      expect(await listLinks.allInnerTexts()).toEqual(['accessorials', 'equipment_types', 'shipment_modes']);
      expect(await page.locator('section.source p.run a').getAttribute('href')).toMatch(/^run\?id=\d+$/);
      await visit('home');
      // The widest real row: the longest list key with a charge-code version, every column filled.
      // It fits without a sideways scroll, and the version is never broken (`2024-06-` / `11`).
      await page.evaluate(`(() => {
        const row = document.querySelector('section.source tbody tr').cloneNode(true);
        const cells = row.querySelectorAll('td span');
        cells[0].textContent = 'charge_line_item_categories';
        cells[1].textContent = '2024-06-11';
        cells[11].textContent = 'impact: the read of public.shipment_charges took longer than 5 s';
        document.querySelector('section.source tbody').append(row);
      })()`);
      const version = page.locator('section.source tbody tr').last().locator('td').nth(1);
      // An inline span has one box per line it takes.
      expect(await version.evaluate((td) => td.querySelector('span')!.getClientRects().length)).toBe(1);
      await visit('home-widest-row');

      // A changed list: its page, reached by its link, draws two ok syncs and the run's change.
      await listLinks.filter({ hasText: 'equipment_types' }).click();
      await page.waitForURL(/\/list\?/);
      expect(await page.locator('h1').innerText()).toBe('equipment_types · page-env');
      expect(await page.locator('figure.chart svg').count()).toBe(1);
      expect(await page.locator('figure.chart circle.chart-entries-dot').count()).toBe(2);
      expect(await page.locator('figure.chart rect.chart-modified').count()).toBe(1);
      // The first sync is the baseline: its entries are no change, so no bar.
      expect(await page.locator('figure.chart rect.chart-added').count()).toBe(0);
      expect((await page.locator('figure.chart svg').boundingBox())!.width).toBeGreaterThan(300);
      // Before → after of the changed field, the upstream markup shown as text.
      const change = page.locator('#changes tbody tr').first();
      expect(await change.locator('ul.diff li').innerText()).toBe(`name: "Refrigerated" → ${JSON.stringify(MARKUP)}`);
      expect(await page.evaluate('window.__injected')).toBeUndefined();
      expect(await page.locator('#attention').count()).toBe(0);
      await visit('list-changed');

      // Its latest sync's run: each list of that run with its outcome, each linked to its page.
      await page.locator('#syncs tbody tr').first().locator('a[href^="run?id="]').click();
      await page.waitForURL(/\/run\?id=\d+$/);
      expect(await page.locator('h1').innerText()).toMatch(/^Run #\d+ · page-env$/);
      const outcomes = [];
      for (const row of await page.locator('#targets tbody tr').all()) outcomes.push((await row.locator('td').allTextContents()).slice(0, 3));
      // No list of this source has variants, so the run page leaves that column out.
      expect(outcomes).toEqual([
        ['accessorials', 'held', '1'],
        ['equipment_types', 'ok', '22'],
        ['shipment_modes', 'failed', ''],
      ]);
      expect(await page.locator('#targets tbody tr a').allInnerTexts()).toEqual(['accessorials', 'equipment_types', 'shipment_modes']);
      await visit('run');

      // The held list, from the run page: the chart marks the hold; the page names the command.
      await page.locator('#targets a', { hasText: 'accessorials' }).click();
      await page.waitForURL(/\/list\?/);
      expect(await page.locator('figure.chart path.chart-held').count()).toBe(1);
      // The held fetch's removals were not applied: no bar for them.
      expect(await page.locator('figure.chart rect').count()).toBe(0);
      expect(await page.locator('#attention h2').innerText()).toBe('This list is held');
      expect(await page.locator('#attention code.command').allInnerTexts()).toEqual(['refsync sync --list accessorials --accept-removals']);
      await visit('list-held');

      // The failed list: its reason in full, failed twice in a row, and how to sync it again.
      await page.goto(`${base}/`, { waitUntil: 'networkidle' });
      await listLinks.filter({ hasText: 'shipment_modes' }).click();
      await page.waitForURL(/\/list\?/);
      expect(await page.locator('#attention pre.reason').innerText()).toBe(failed.error);
      expect(await page.locator('#attention code.command').allInnerTexts()).toEqual([
        'refsync trigger --list shipment_modes',
        'refsync sync --list shipment_modes',
      ]);
      expect(await page.locator('dl.facts').innerText()).toMatch(/failed in a row\s+2/);
      expect(await page.locator('figure.chart path.chart-failed').count()).toBe(2);
      await visit('list-failed');

      expect(await page.locator('script').count()).toBe(0);
      expect(problems).toEqual([]);
    });
  }

  it('answers 404 for a list or a run that does not exist, and for a malformed run id', async () => {
    const { base } = await synced();
    const auth = { authorization: `Basic ${btoa(`admin:${PASSWORD}`)}` };
    for (const path of ['list?environment=page-env&list=hazmat&variant=', 'list', 'run?id=999999', 'run?id=1x', 'run?id=0']) {
      const res = await fetch(`${base}/${path}`, { headers: auth });
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-security-policy')).toBe("default-src 'self'");
    }
    expect((await fetch(`${base}/list?environment=page-env&list=hazmat&variant=`)).status).toBe(401);
  });
});
