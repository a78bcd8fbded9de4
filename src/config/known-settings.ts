import { closestName } from '../util/closest-name.ts';
import { settingNames } from './settings-reference.ts';

/**
 * Every REFSYNC_* variable refsync reads, from the one table of settings (settings-reference.ts). A
 * test checks that each name the source reads is here, so a new setting cannot be flagged as unknown.
 */
export const knownSettings = settingNames().filter((name) => name.startsWith('REFSYNC_'));

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
      const closest = closestName(name, knownSettings);
      const hint = closest ? `; did you mean ${closest}?` : '';
      return `${name.slice(0, 80)} is not a setting refsync knows${hint}`;
    });
}
