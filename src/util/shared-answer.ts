// One answer for many callers: a check that costs a connection (a readiness probe) runs at most once
// at a time, and its answer, success or failure, is reused for a moment, so a burst of callers (a
// load balancer's probes, a scrape, 300 requests at once) costs what one does.

/**
 * `check` shared: calls made while it runs get its promise; once it has settled, its answer is
 * reused for `reuseMs`, then the next call runs it again.
 */
export function sharedAnswer<T>(check: () => Promise<T>, reuseMs: number, now: () => number = Date.now): () => Promise<T> {
  let current: Promise<T> | undefined;
  /** When the current answer settled; undefined while it is still under way. */
  let settledAt: number | undefined;
  return () => {
    if (current && (settledAt === undefined || now() - settledAt < reuseMs)) return current;
    const answer = check();
    current = answer;
    settledAt = undefined;
    const settled = () => {
      if (current === answer) settledAt = now();
    };
    answer.then(settled, settled);
    return answer;
  };
}
