// The name a user most likely meant when they typed one refsync does not know: a misspelt setting,
// list key or command is named back with the one it is closest to, instead of only refused.

/** Edit distance between two names: how many single-character edits turn one into the other. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The candidate closest to `name`, when it is near enough to be a slip: at most 3 edits (a third of
 * the name's length for a long one), and fewer than the name has characters ('st' is no slip of 'sql');
 * undefined when none is.
 */
export function closestName<T extends string>(name: string, candidates: readonly T[]): T | undefined {
  const [closest] = candidates.map((c) => [c, editDistance(name, c)] as const).sort((x, y) => x[1] - y[1]);
  return closest && closest[1] <= Math.max(3, Math.floor(name.length / 3)) && closest[1] < name.length ? closest[0] : undefined;
}
