// Upstream faults through the whole pipeline: the failing
// list keeps its last good data, the other lists sync, nothing is half-applied, and the next run
// after the fault heals applies the whole new state once.
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { changeList, expectFailedThenRecovered, expectRerunAddsNothing, faultSource, SMALL_LISTS } from './harness.ts';
import { expectConsistentHistory, expectWholeStates, footprint } from './invariants.ts';

const t = useTestDatabase();
let sb: Sandbox;

beforeAll(async () => {
  sb = await useSandbox();
});

function logins(): number {
  return sb.control.requestLog().filter((r) => r.method === 'POST' && r.path === '/v2/auth/token/').length;
}

describe('10. 500s, then 429 with Retry-After', () => {
  it('waits at least what Retry-After (seconds) asks, retries the 500s, then the sync succeeds', async () => {
    const fx = faultSource(sb, t.db, {}, { retry: { attempts: 4, baseDelayMs: 5, maxDelayMs: 20, maxRetryAfterMs: 5000 } });
    await fx.sync();
    changeList(sb, 'shipment_modes');
    const after = fx.served();
    sb.control.resetRequestLog();
    sb.control.setFaults({ rateLimit: { count: 1, retryAfter: '1' }, errorCount: 2, paths: ['shipment_modes'] });
    const started = Date.now();
    const run = await fx.sync();
    const elapsed = Date.now() - started;
    sb.control.clearFaults();
    expect(run.status, run.outcomes.map((o) => o.error).join('; ')).toBe('succeeded');
    expect(elapsed).toBeGreaterThanOrEqual(1000);
    const statuses = sb.control
      .requestLog()
      .filter((r) => r.path === '/v2/shipments/shipment-modes/')
      .map((r) => r.status);
    expect(statuses).toEqual([429, 500, 500, 200]);
    await expectWholeStates(t.db, fx.source, [after]);
    await expectConsistentHistory(t.db, fx.source);
    await expectRerunAddsNothing(t.db, fx);
  });

  it('waits until the HTTP-date Retry-After names, then succeeds', async () => {
    const fx = faultSource(sb, t.db, {}, { retry: { attempts: 3, baseDelayMs: 5, maxDelayMs: 20, maxRetryAfterMs: 5000 } });
    await fx.sync();
    changeList(sb, 'equipment_types');
    const after = fx.served();
    // HTTP dates have whole seconds: the next whole second plus one is 1 to 2 s away.
    const until = (Math.floor(Date.now() / 1000) + 2) * 1000;
    sb.control.setFaults({ rateLimit: { count: 1, retryAfter: new Date(until).toUTCString() }, paths: ['equipment_types'] });
    const run = await fx.sync();
    const finished = Date.now();
    sb.control.clearFaults();
    expect(run.status).toBe('succeeded');
    expect(finished).toBeGreaterThanOrEqual(until);
    await expectWholeStates(t.db, fx.source, [after]);
    await expectConsistentHistory(t.db, fx.source);
  });

  it('a Retry-After above the cap fails the list at once, retryable with retryAfterMs; data untouched; then it syncs', async () => {
    const fx = faultSource(sb, t.db, {}, { retry: { attempts: 4, baseDelayMs: 5, maxDelayMs: 20, maxRetryAfterMs: 2000 } });
    await fx.sync();
    const before = fx.served();
    changeList(sb, 'piece_types');
    sb.control.resetRequestLog();
    sb.control.setFaults({ rateLimit: { count: 1, retryAfter: '3600' }, paths: ['piece_types'] });
    const run = await fx.sync();
    const requests = sb.control.requestLog().filter((r) => r.path === '/v2/shipments/piece-types/');
    expect(requests.map((r) => r.status)).toEqual([429]);
    const outcome = await expectFailedThenRecovered(sb, t.db, fx, 'piece_types', before, run, 'http_status');
    expect(outcome.failure).toMatchObject({ status: 429, retryable: true, retryAfterMs: 3_600_000 });
  });
});

describe('12. bodies that are not the list', () => {
  const cases = [
    { name: 'truncated JSON', fault: { truncate: { count: 2 } }, code: 'protocol' },
    { name: 'a connection reset mid-body', fault: { resetBody: { count: 2 } }, code: 'network' },
    { name: 'an HTML page with 200', fault: { html: { count: 2 } }, code: 'protocol' },
  ];
  for (const c of cases) {
    it(`${c.name}: the list fails, its data untouched, the other lists sync; the next run heals`, async () => {
      const fx = faultSource(sb, t.db);
      await fx.sync();
      const before = fx.served();
      changeList(sb, 'equipment_types');
      changeList(sb, 'shipment_modes');
      sb.control.setFaults({ ...c.fault, paths: ['equipment_types'] });
      const run = await fx.sync();
      expect(fx.outcome(run, 'shipment_modes').status).toBe('changed');
      await expectFailedThenRecovered(sb, t.db, fx, 'equipment_types', before, run, c.code);
    });
  }
});

describe('13. 401 in the middle of paging', () => {
  function pagedSource() {
    sb.control.setGenerated('nmfc_codes', 95);
    sb.control.setPaging('nmfc_codes', 'envelope');
    return faultSource(sb, t.db, { REFSYNC_LISTS: `${SMALL_LISTS},nmfc_codes` }, { pageSize: 10 });
  }

  it('401 on page 7 once: exactly one re-login, the list completes whole', async () => {
    const fx = pagedSource();
    await fx.sync();
    sb.control.changeGenerated('nmfc_codes', { everyNth: 7 });
    const after = fx.served();
    sb.control.resetRequestLog();
    sb.control.setFaults({ unauthorizedOnPage: { page: 7, count: 1 }, paths: ['nmfc_codes'] });
    const run = await fx.sync();
    sb.control.clearFaults();
    expect(run.status, run.outcomes.map((o) => o.error).join('; ')).toBe('succeeded');
    expect(logins()).toBe(1);
    await expectWholeStates(t.db, fx.source, [after]);
    await expectConsistentHistory(t.db, fx.source);
  });

  it('401 again after the re-login: one re-login, then a terminal auth failure; no login storm, nothing applied', async () => {
    const fx = pagedSource();
    await fx.sync();
    const before = fx.served();
    sb.control.changeGenerated('nmfc_codes', { everyNth: 5 });
    sb.control.resetRequestLog();
    sb.control.setFaults({ unauthorizedOnPage: { page: 7, count: 2 }, paths: ['nmfc_codes'] });
    const run = await fx.sync();
    expect(logins()).toBe(1);
    const pages = sb.control.requestLog().filter((r) => r.path === '/v2/shipments/nmfc/');
    expect(pages.filter((r) => r.status === 401)).toHaveLength(2);
    const outcome = await expectFailedThenRecovered(sb, t.db, fx, 'nmfc_codes', before, run, 'auth');
    expect(outcome.failure).toMatchObject({ retryable: false, status: 401 });
    expect(outcome.error).toMatch(/page 7/);
  });
});

describe('14. the same key twice in one answer', () => {
  it('identical copies collapse: the list syncs as served', async () => {
    const fx = faultSource(sb, t.db);
    await fx.sync();
    changeList(sb, 'shipment_modes');
    const after = fx.served();
    sb.control.setFaults({ duplicateKey: { list: 'shipment_modes', mode: 'identical' } });
    const run = await fx.sync();
    sb.control.clearFaults();
    expect(run.status).toBe('succeeded');
    await expectWholeStates(t.db, fx.source, [after]);
    await expectConsistentHistory(t.db, fx.source);
  });

  it('conflicting copies fail the list, naming the key; data untouched', async () => {
    const fx = faultSource(sb, t.db);
    await fx.sync();
    const before = fx.served();
    const key = String((sb.control.getEntries('shipment_modes')[0] as { code: string }).code);
    changeList(sb, 'shipment_modes');
    sb.control.setFaults({ duplicateKey: { list: 'shipment_modes', mode: 'conflicting' } });
    const run = await fx.sync();
    const outcome = await expectFailedThenRecovered(sb, t.db, fx, 'shipment_modes', before, run, 'duplicate_key');
    expect(outcome.error).toContain(`'${key}'`);
  });
});

describe('16. paging that never ends', () => {
  it('a next link that repeats: stopped, the list failed, nothing applied', async () => {
    sb.control.setPaging('piece_types', 'next', { defaultPageSize: 3 });
    const fx = faultSource(sb, t.db);
    try {
      await fx.sync();
      const before = fx.served();
      changeList(sb, 'piece_types');
      sb.control.setFaults({ nextLoop: { list: 'piece_types' } });
      const run = await fx.sync();
      const outcome = await expectFailedThenRecovered(sb, t.db, fx, 'piece_types', before, run, 'paging');
      expect(outcome.error).toMatch(/loop/);
    } finally {
      sb.control.setPaging('piece_types', 'envelope');
    }
  });

  it('pages that never end: stopped at the page limit, the list failed, nothing applied', async () => {
    const fx = faultSource(sb, t.db, {}, { pageSize: 5, maxPages: 40 });
    await fx.sync();
    const before = fx.served();
    const entriesBefore = await footprint(t.db, fx.source.environment);
    changeList(sb, 'equipment_types');
    sb.control.resetRequestLog();
    sb.control.setFaults({ endlessPages: { list: 'equipment_types' } });
    const run = await fx.sync();
    const pages = sb.control.requestLog().filter((r) => r.path === '/v2/shipments/equipment-types/').length;
    expect(pages).toBeGreaterThan(0);
    expect(pages).toBeLessThanOrEqual(40 * 2);
    expect((await footprint(t.db, fx.source.environment)).entries).toBe(entriesBefore.entries);
    await expectFailedThenRecovered(sb, t.db, fx, 'equipment_types', before, run, 'paging');
  });
});
