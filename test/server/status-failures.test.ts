// The status page after a first failure: every list stopped by one untrusted certificate is one
// "Failing now" row naming them, and once they sync again the page shows no failure rows above the
// latest changes; the earlier failures wait folded, a click away. In a real browser (Debian's
// Chromium, as status-page.test.ts), screenshots kept in test-artifacts/screenshots/.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { SourceConfig } from '../../src/config/types.ts';
import { runSync } from '../../src/sync/run/run-sync.ts';
import { createUpstreamClient } from '../../src/upstream/factory.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { haveChromium, keepScreenshot, launchLoggedInBrowser } from '../helpers/chromium.ts';
import { startTestWorker, workerConfig, testQueuePrefix } from '../queue/helpers.ts';

const haveBrowser = haveChromium('status failures');
const PASSWORD = 'failures-pass';
const LISTS = ['equipment_types', 'hazmat', 'shipment_modes'];

const tdb = useTestDatabase();

async function syncWith(source: SourceConfig) {
  const client = createUpstreamClient(source, undefined, { retry: { attempts: 1, baseDelayMs: 5, maxDelayMs: 20 } });
  try {
    return await runSync({ db: tdb.db, sources: [source], clientFor: () => client, trigger: 'cli' });
  } finally {
    await client.close();
  }
}

async function openPage(): Promise<Page> {
  return (await launchLoggedInBrowser(PASSWORD, 'refsync-status-failures')).newPage();
}

describe.skipIf(!haveBrowser)('status page after a first failure, in Chromium', () => {
  it('one row per cause while failing; after the fix no failure above the changes, the earlier ones folded a click away', async () => {
    const sb = await useSandbox();
    const config = workerConfig(sb, tdb.url, { REFSYNC_ENVIRONMENT: 'first-try', REFSYNC_LISTS: LISTS.join(','), REFSYNC_DASHBOARD_PASSWORD: PASSWORD });
    const trusted = config.sources[0]!;
    const { caPem: _ca, caFile: _file, ...untrusted } = trusted;
    const [failed] = await syncWith(untrusted);
    expect(failed!.outcomes.map((o) => o.errorCode)).toEqual(['tls', 'tls', 'tls']);

    const worker = await startTestWorker(config, testQueuePrefix());
    const base = `http://127.0.0.1:${worker.http.port}`;
    const page = await openPage();
    await page.goto(`${base}/`, { waitUntil: 'networkidle' });
    const failing = page.locator('#failing');
    expect(await failing.locator('h2').innerText()).toBe('Failing now (3 lists)');
    expect(await failing.locator('tbody tr').count()).toBe(1);
    const row = await failing.locator('tbody tr').innerText();
    expect(row).toMatch(/^3 lists: equipment_types, hazmat, shipment_modes\s+first-try\s+failed\s/);
    expect(row.split('set REFSYNC_CA_FILE to the CA that signed it')).toHaveLength(2);
    expect(await failing.locator('a').allInnerTexts()).toEqual(LISTS);
    // The source's run line and table say it once too: they point to the shared cause.
    expect(await page.locator('section.source p.run').innerText()).toMatch(/3 not synced\. Why: under Failing now, above\.$/);
    expect(await page.locator('section.source td.reason a[href="#failing"]').allInnerTexts()).toEqual(LISTS.map(() => 'see Failing now'));
    expect(await page.locator('#failures').count()).toBe(0);
    await keepScreenshot(page, '1280-failing-now');
    // On a phone the row is a card, and the page does not scroll sideways.
    await page.setViewportSize({ width: 390, height: 900 });
    expect(await page.evaluate('document.documentElement.scrollWidth > document.documentElement.clientWidth')).toBe(false);
    await keepScreenshot(page, '390-failing-now');
    await page.setViewportSize({ width: 1280, height: 900 });

    const [fixed] = await syncWith(trusted);
    expect(fixed!.status).toBe('succeeded');
    await page.reload({ waitUntil: 'networkidle' });
    expect(await page.locator('#failing').count()).toBe(0);
    // Nothing about the old failure between the lists and the latest changes.
    // Browser-side code as text: this project's TypeScript has no DOM types.
    const order = await page.evaluate("[...document.querySelectorAll('main > section')].map((s) => s.id || s.className)");
    expect(order).toEqual(['source', 'changes', 'failures']);
    const earlier = page.locator('#failures');
    expect(await earlier.locator('summary').innerText()).toBe('Earlier failures (3), of lists that have synced since');
    expect(await earlier.locator('table').isVisible()).toBe(false);
    await keepScreenshot(page, '1280-recovered');

    await earlier.locator('summary').click();
    expect(await earlier.locator('table').isVisible()).toBe(true);
    expect(await earlier.locator('tbody tr').count()).toBe(3);
    expect(await earlier.locator('tbody').innerText()).toContain('set REFSYNC_CA_FILE');
    await keepScreenshot(page, '1280-recovered-earlier-open');
  });
});
