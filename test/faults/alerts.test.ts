// Alert delivery under faults and a skewed clock, from a real sync to the
// receiver: at-least-once with one stable id, never redirected, stopped by 410, private addresses
// refused, and history times taken from the database clock, not the process's.
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AppConfig } from '../../src/config/types.ts';
import { loadConfig } from '../../src/config/load.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { sandboxEnv } from '../helpers/source.ts';
import { newSecret, testDispatcher } from '../alerts/fixture.ts';
import { startReceiver } from '../alerts/receiver.ts';
import { fileLogs, secrets, sourceFixture, uniqueEnvironment, type FaultSource } from './harness.ts';
import { expectConsistentHistory, expectWholeStates } from './invariants.ts';

const t = useTestDatabase();
let sb: Sandbox;
let seq = 0;

beforeAll(async () => {
  sb = await useSandbox();
});
afterEach(() => {
  vi.useRealTimers();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Case {
  fx: FaultSource;
  config: AppConfig;
}

/** A source with a webhook, synced once (baseline), then one new code synced: one `added` alert pending. */
async function alertCase(receiverUrl: string, extra: Record<string, string> = {}): Promise<Case> {
  const secret = newSecret();
  secrets.add(secret);
  secrets.add(secret.slice('whsec_'.length));
  const config = loadConfig(
    sandboxEnv(sb, {
      REFSYNC_ENVIRONMENT: uniqueEnvironment('alerts'),
      REFSYNC_LISTS: 'shipment_modes',
      REFSYNC_ALERT_ON: 'added',
      REFSYNC_WEBHOOK_URL: receiverUrl,
      REFSYNC_WEBHOOK_SECRET: secret,
      REFSYNC_WEBHOOK_ALLOW_PRIVATE: 'true',
      DATABASE_URL: t.url,
      ...extra,
    }),
  );
  const fx = sourceFixture(config.sources[0]!, t.db, {}, sb);
  expect((await fx.sync()).status).toBe('succeeded');
  sb.control.addEntry('shipment_modes', { code: `ALRT${++seq}`, description: `alert case ${seq}`, id: 800_000 + seq });
  const after = fx.served();
  expect((await fx.sync()).status).toBe('succeeded');
  await expectWholeStates(t.db, fx.source, [after]);
  return { fx, config };
}

async function alertRows(environment: string) {
  const { rows } = await t.db.query<{ id: number; kind: string; state: string; attempts: number; last_error: string | null }>(
    'select id, kind, state, attempts, last_error from refdata.alerts where environment = $1 order by id',
    [environment],
  );
  return rows;
}

/** Drains until nothing is due or `rounds` ran; sums the results. */
async function drain(dispatcher: ReturnType<typeof testDispatcher>, rounds = 1) {
  const total = { delivered: 0, failed: 0, dead: 0, skipped: 0, disabled: 0 };
  for (let i = 0; i < rounds; i++) {
    const r = await dispatcher.drainOnce();
    for (const k of Object.keys(total) as Array<keyof typeof total>) total[k] += r[k];
    await sleep(15);
  }
  return total;
}

describe('20. webhook receiver faults', () => {
  it('down, slow, 500, then a redirect, then up: one alert, the same webhook-id every time, delivered once, never redirected', async () => {
    const receiver = await startReceiver();
    const elsewhere = await startReceiver('/elsewhere');
    const { fx, config } = await alertCase(receiver.url);
    const dispatcher = testDispatcher(t.db, config, receiver.caPem, { timeoutMs: 1000, logger: fileLogs.logger });
    try {
      await receiver.stop();
      expect(await drain(dispatcher)).toMatchObject({ failed: 1, delivered: 0 });
      await receiver.start();

      receiver.delayMs = 3000; // past the dispatcher's 1 s limit
      expect(await drain(dispatcher)).toMatchObject({ failed: 1, delivered: 0 });
      receiver.delayMs = 0;

      receiver.respond = () => ({ status: 500, body: 'boom' });
      expect(await drain(dispatcher)).toMatchObject({ failed: 1, delivered: 0 });

      receiver.respond = () => ({ status: 302, headers: { location: elsewhere.url } });
      expect(await drain(dispatcher)).toMatchObject({ failed: 1, delivered: 0 });

      receiver.respond = () => ({ status: 204 });
      expect(await drain(dispatcher)).toMatchObject({ delivered: 1, failed: 0 });
      expect(await drain(dispatcher, 2)).toMatchObject({ delivered: 0, failed: 0 });
    } finally {
      await dispatcher.stop();
    }
    expect(elsewhere.requests).toHaveLength(0);
    expect(receiver.requests).toHaveLength(4); // slow, 500, 302, 204 (down received nothing)
    expect(new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(await alertRows(fx.source.environment)).toMatchObject([{ kind: 'added', state: 'delivered', attempts: 5 }]);
    await expectConsistentHistory(t.db, fx.source);
  });

  it('410 Gone: the alert is disabled, not retried, and kept in the outbox', async () => {
    const receiver = await startReceiver();
    receiver.respond = () => ({ status: 410 });
    const { fx, config } = await alertCase(receiver.url);
    const dispatcher = testDispatcher(t.db, config, receiver.caPem, { logger: fileLogs.logger });
    try {
      expect(await drain(dispatcher, 3)).toMatchObject({ disabled: 1, delivered: 0, failed: 0 });
    } finally {
      await dispatcher.stop();
    }
    expect(receiver.requests).toHaveLength(1);
    expect(await alertRows(fx.source.environment)).toMatchObject([{ kind: 'added', state: 'disabled' }]);
    await expectConsistentHistory(t.db, fx.source);
  });

  it('a webhook resolving to a private address is refused before connecting; the alert stays pending', async () => {
    const receiver = await startReceiver();
    const { fx, config } = await alertCase(receiver.url, { REFSYNC_WEBHOOK_ALLOW_PRIVATE: 'false' });
    const dispatcher = testDispatcher(t.db, config, receiver.caPem, { logger: fileLogs.logger });
    try {
      expect(await drain(dispatcher)).toMatchObject({ failed: 1, delivered: 0 });
    } finally {
      await dispatcher.stop();
    }
    expect(receiver.requests).toHaveLength(0);
    const [row] = await alertRows(fx.source.environment);
    expect(row).toMatchObject({ kind: 'added', state: 'pending', attempts: 1 });
    expect(row!.last_error).toMatch(/private|not allowed|refused/i);
  });
});

describe("20. the worker's clock 10 minutes off", () => {
  async function dbNow(): Promise<number> {
    const { rows } = await t.db.query<{ now: Date }>('select clock_timestamp() as now');
    return rows[0]!.now.getTime();
  }

  for (const skewMin of [10, -10]) {
    it(`history times come from the database clock (process clock ${skewMin > 0 ? 'ahead' : 'behind'} by 10 min)`, async () => {
      const receiver = await startReceiver();
      const from = await dbNow();
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + skewMin * 60_000, shouldAdvanceTime: true });
      const { fx } = await alertCase(receiver.url);
      vi.useRealTimers();
      const to = await dbNow();
      const { rows } = await t.db.query<{ what: string; at: Date }>(
        `select 'valid_from' as what, valid_from as at from refdata.entries where environment = $1
         union all select 'detected_at', detected_at from refdata.entry_changes where environment = $1
         union all select 'fetched_at', fetched_at from refdata.snapshots where environment = $1
         union all select 'started_at', started_at from refdata.sync_runs where environment = $1
         union all select 'finished_at', finished_at from refdata.sync_runs where environment = $1
         union all select 'created_at', created_at from refdata.alerts where environment = $1`,
        [fx.source.environment],
      );
      expect(new Set(rows.map((r) => r.what)).size).toBe(6);
      const outside = rows.filter((r) => r.at.getTime() < from || r.at.getTime() > to);
      expect(outside, `times outside the database's clock range`).toEqual([]);
    });

    // The dispatcher schedules on the database's clock (next_attempt_at defaults to its now()),
    // so a worker whose clock is behind still delivers at once.
    it(`an alert is delivered promptly, once, with one id, when the dispatcher's clock is ${skewMin > 0 ? 'ahead' : 'behind'} by 10 min`, async () => {
      const receiver = await startReceiver();
      receiver.respond = (() => {
        let n = 0;
        return () => (++n === 1 ? { status: 500, body: 'first fails' } : { status: 204 });
      })();
      const { fx, config } = await alertCase(receiver.url);
      const dispatcher = testDispatcher(t.db, config, receiver.caPem, {
        now: () => Date.now() + skewMin * 60_000,
        logger: fileLogs.logger,
      });
      try {
        const total = await drain(dispatcher, 4);
        expect(total).toMatchObject({ failed: 1, delivered: 1 });
      } finally {
        await dispatcher.stop();
      }
      expect(receiver.requests).toHaveLength(2);
      expect(new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size).toBe(1);
      expect(await alertRows(fx.source.environment)).toMatchObject([{ state: 'delivered', attempts: 2 }]);
    });
  }
});
