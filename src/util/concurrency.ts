/**
 * Runs fn over items with at most `limit` in flight; results keep the items' order. After the first
 * failure no further item starts, and the failure is thrown only once the items in flight have
 * settled: a caller that closes shared resources (an HTTP pool, a database) on the way out must not
 * cut the others short, which they would then report as failures of their own.
 */
export async function mapWithConcurrency<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const lanes = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        results[index] = await fn(items[index]!, index);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  });
  const settled = await Promise.allSettled(lanes);
  const failure = settled.find((s) => s.status === 'rejected');
  if (failure) throw failure.reason;
  return results;
}
