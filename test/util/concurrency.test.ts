import { describe, expect, it } from 'vitest';
import { mapWithConcurrency } from '../../src/util/concurrency.ts';

describe('mapWithConcurrency', () => {
  it('keeps the order of the items', async () => {
    const out = await mapWithConcurrency([30, 10, 20], 2, async (ms) => {
      await new Promise((r) => setTimeout(r, ms));
      return ms * 2;
    });
    expect(out).toEqual([60, 20, 40]);
  });

  // A run that ends on a database outage closes the HTTP pool on its way out: the lists still in
  // flight must have finished by then, or they are cut short and recorded as network failures.
  it('after a failure starts nothing more, and throws only once the items in flight have settled', async () => {
    const finished: number[] = [];
    const started: number[] = [];
    const run = mapWithConcurrency([0, 1, 2, 3], 2, async (i) => {
      started.push(i);
      if (i === 0) throw new Error('outage');
      await new Promise((r) => setTimeout(r, 50));
      finished.push(i);
      return i;
    });
    await expect(run).rejects.toThrow('outage');
    expect(finished).toEqual([1]);
    expect(started).toEqual([0, 1]);
  });
});
