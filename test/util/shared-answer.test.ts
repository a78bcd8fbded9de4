// One check for many callers: callers while it runs share it, its answer (a failure too) is reused
// for the window, and the next call after the window runs it again.
import { describe, expect, it } from 'vitest';
import { sharedAnswer } from '../../src/util/shared-answer.ts';

describe('sharedAnswer', () => {
  it('shares a check under way, reuses its answer within the window, runs again after it', async () => {
    let clock = 0;
    let runs = 0;
    let fail = false;
    const check = sharedAnswer(
      async () => {
        runs++;
        await new Promise((resolve) => setTimeout(resolve, 10));
        if (fail) throw new Error(`failed run ${runs}`);
        return runs;
      },
      1_000,
      () => clock,
    );
    expect(await Promise.all([check(), check(), check()])).toEqual([1, 1, 1]);
    clock = 999;
    expect(await check()).toBe(1);
    clock = 1_000;
    fail = true;
    await expect(Promise.all([check(), check()])).rejects.toThrow('failed run 2');
    clock = 1_500;
    await expect(check()).rejects.toThrow('failed run 2');
    expect(runs).toBe(2);
    clock = 2_000;
    fail = false;
    expect(await check()).toBe(3);
  });
});
