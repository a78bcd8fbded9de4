// One way to group things that failed alike, for every place that says a shared cause once: the
// sync report, the run's log, the run's stored error, the status page's "Failing now" and the
// alert log. What counts as alike is each caller's key (a list's status and its failure's cause,
// src/util/failure-cause.ts).

/** The items grouped by key (compared as JSON), groups in the order of their first item, items in theirs. */
export function groupAlike<T>(items: Iterable<T>, keyOf: (item: T) => unknown): T[][] {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = JSON.stringify(keyOf(item));
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return [...groups.values()];
}
