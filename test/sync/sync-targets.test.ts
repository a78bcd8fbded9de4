import { describe, expect, it } from 'vitest';
import { syncTargets } from '../../src/sync/run/run-sync.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('syncTargets', () => {
  it("keeps the items' order, and tells each item's end", async () => {
    const ended: number[] = [];
    const out = await syncTargets([30, 10, 20], {
      lanes: 2,
      sync: async (ms) => {
        await sleep(ms);
        return ms * 2;
      },
      ended: (ms) => {
        ended.push(ms);
      },
    });
    expect(out).toEqual([60, 20, 40]);
    expect(ended.sort()).toEqual([10, 20, 30]);
  });

  // A run that ends on a database outage closes the HTTP pool on its way out: the lists still in
  // flight must have finished by then, or they are cut short and recorded as network failures.
  it('after a failure starts nothing more, and throws only once the items in flight have settled', async () => {
    const finished: number[] = [];
    const started: number[] = [];
    const run = syncTargets([0, 1, 2, 3], {
      lanes: 2,
      sync: async (i) => {
        started.push(i);
        if (i === 0) throw new Error('outage');
        await sleep(50);
        finished.push(i);
        return i;
      },
    });
    await expect(run).rejects.toThrow('outage');
    expect(finished).toEqual([1]);
    expect(started).toEqual([0, 1]);
  });

  it('after a result that stops the lanes starts nothing more: the items never started have none', async () => {
    const out = await syncTargets(['a', 'stop', 'b', 'c'], {
      lanes: 1,
      sync: async (item) => item.toUpperCase(),
      stopsAfter: (result) => result === 'STOP',
    });
    expect(out).toEqual(['A', 'STOP', undefined, undefined]);
  });

  it('starts nothing once its signal is aborted', async () => {
    const stop = new AbortController();
    const out = await syncTargets([1, 2, 3], {
      lanes: 1,
      signal: stop.signal,
      sync: async (i) => {
        if (i === 2) stop.abort();
        return i;
      },
    });
    expect(out).toEqual([1, 2, undefined]);
  });
});
