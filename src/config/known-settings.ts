import { settingNames } from './settings-reference.ts';

/**
 * Every REFSYNC_* variable refsync reads, from the one table of settings (settings-reference.ts). A
 * test checks that each name the source reads is here, so a new setting cannot be flagged as unknown.
 */
export const knownSettings = settingNames().filter((name) => name.startsWith('REFSYNC_'));

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
 * One warning per REFSYNC_* variable refsync does not read, naming the closest known setting: a
 * misspelt list filter would otherwise be ignored silently and every list synced. A warning, not
 * an error, so a setting from a newer release does not stop an older one.
 */
export function unknownSettingWarnings(env: Record<string, string | undefined>): string[] {
  const known = new Set(knownSettings);
  return Object.keys(env)
    .filter((name) => name.startsWith('REFSYNC_') && !known.has(name))
    .sort()
    .map((name) => {
      const [closest] = knownSettings.map((k) => [k, editDistance(name, k)] as const).sort((x, y) => x[1] - y[1]);
      const hint = closest && closest[1] <= Math.max(3, Math.floor(name.length / 3)) ? `; did you mean ${closest[0]}?` : '';
      return `${name.slice(0, 80)} is not a setting refsync knows${hint}`;
    });
}
