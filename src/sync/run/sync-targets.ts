// The lanes lists are synced in, side by side: a few at a time, in the items' order, until a list
// or the signal stops them. Whoever syncs lists uses them through sync-in-batches.ts, which tells
// each list's batch as it ends and writes the batches after the last.

/** How lists are synced in lanes. */
export interface TargetsPolicy<T, R> {
  /** Lists in flight at once. */
  lanes: number;
  /** Syncs one list and settles or reports it as its caller does. What it throws stops the lanes. */
  sync(item: T): Promise<R>;
  /** Told once a list's sync has ended, however it ended: its batch waits for it no longer. */
  ended?(item: T): Promise<void> | void;
  /** Whether a list's result stops the lanes: no list starts after it. */
  stopsAfter?(result: R): boolean;
  /** Stops the lanes too: no list starts once it is aborted. */
  signal?: AbortSignal;
}

/**
 * Syncs the items in lanes: each one's result in the items' order, undefined for one never started.
 * After a throw no further list starts, and it is thrown only once the lists in flight have settled:
 * a caller that closes shared resources (an HTTP pool, a database) on the way out must not cut the
 * others short, which they would then report as failures of their own.
 */
export async function syncTargets<T, R>(items: readonly T[], policy: TargetsPolicy<T, R>): Promise<Array<R | undefined>> {
  const results = Array.from<R | undefined>({ length: items.length });
  let next = 0;
  let stopped = false;
  const lanes = Array.from({ length: Math.max(1, Math.min(policy.lanes, items.length)) }, async () => {
    while (!stopped && !policy.signal?.aborted && next < items.length) {
      const index = next++;
      const item = items[index]!;
      try {
        const result = await policy.sync(item);
        results[index] = result;
        if (policy.stopsAfter?.(result)) stopped = true;
      } catch (err) {
        stopped = true;
        throw err;
      } finally {
        await policy.ended?.(item);
      }
    }
  });
  const settled = await Promise.allSettled(lanes);
  const failure = settled.find((s) => s.status === 'rejected');
  if (failure) throw failure.reason;
  return results;
}
