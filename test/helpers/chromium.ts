// Debian's Chromium, driven by playwright-core (no browser download), for the status pages' tests:
// one persistent context logged in to the pages, and screenshots kept where CI collects them
// (test-artifacts/screenshots/). Skipped, saying so, where no Chromium is installed.
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { onCleanup } from '../queue/helpers.ts';

const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOTS = fileURLToPath(new URL('../../test-artifacts/screenshots/', import.meta.url));

/** Whether Chromium is installed; where it is not, `label`'s browser tests say they are skipped. */
export function haveChromium(label: string): boolean {
  const found = existsSync(CHROMIUM);
  if (!found) console.warn(`[${label}] browser test skipped: no Chromium at ${CHROMIUM} (apt-get install chromium; .ci/run does)`);
  return found;
}

/** A headless Chromium at 1280 × 900, logged in to the pages as admin; its profile is removed afterwards. */
export async function launchLoggedInBrowser(password: string, prefix: string): Promise<BrowserContext> {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  // Cleanups run in reverse: the browser closes before its profile goes.
  onCleanup(() => rm(dir, { recursive: true, force: true }));
  const context = await chromium.launchPersistentContext(join(dir, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    httpCredentials: { username: 'admin', password },
    viewport: { width: 1280, height: 900 },
  });
  onCleanup(() => context.close());
  return context;
}

/** Keeps a full-page screenshot where CI collects it. */
export async function keepScreenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}
