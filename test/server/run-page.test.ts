// The run's page when every list of the run failed for one cause: the run's
// error says it once, and each list's row points to it instead of repeating it; a list that failed
// for a cause of its own keeps its reason. Real syncs against an unreachable host and the sandbox.
import { describe, expect, it } from 'vitest';
import { loadRunPage, renderRunPage } from '../../src/server/run-page.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { pipelineFixture } from '../sync/fixture.ts';

const t = useTestDatabase();
const occurrences = (text: string, part: string) => text.split(part).length - 1;

async function page(runId: number): Promise<string> {
  const data = await loadRunPage(t.db, [], runId);
  return renderRunPage(data!);
}

describe("a run's page", () => {
  it('every list stopped by an unreachable host: the reason once, under Run error; each row points to it', async () => {
    const fx = pipelineFixture(await useSandbox(), { REFSYNC_ENVIRONMENT: 'unreachable-page', REFSYNC_BASE_URL: 'https://127.0.0.1:1' });
    try {
      const run = await fx.sync(t.db);
      expect(run.status).toBe('failed');
      const html = await page(run.runId);
      const lists = run.outcomes.length;
      expect(html).toContain(
        `${lists} of ${lists} targets did not sync: all ${lists} lists failed: POST /v2/auth/token/: cannot connect to 127.0.0.1:1 (ECONNREFUSED)`,
      );
      expect(occurrences(html, 'ECONNREFUSED')).toBe(1);
      expect(occurrences(html, '<a href="#run-error">see Run error</a>')).toBe(lists);
      expect(html).toContain('<section id="run-error" class="attention">');
    } finally {
      await fx.client.close();
    }
  });

  it('lists that failed each for a cause of their own keep their reasons on their rows', async () => {
    const sb = await useSandbox();
    const fx = pipelineFixture(sb, { REFSYNC_ENVIRONMENT: 'own-causes-page', REFSYNC_LISTS: 'hazmat,shipment_modes,equipment_types' });
    sb.control.setFaults({ errorCount: 50, paths: ['hazmat', 'equipment_types'] });
    try {
      const run = await fx.sync(t.db);
      expect(run.status).toBe('partial');
      const html = await page(run.runId);
      expect(html).not.toContain('see Run error');
      expect(occurrences(html, 'GET /v2/shipments/hazmat/ page 1: 500')).toBe(2);
    } finally {
      sb.control.clearFaults();
      await fx.client.close();
    }
  });
});
