// How many targets a source has that syncs every list and variant the sandbox serves, for the tests
// that name a full sync's count: derived from the lists, so adding one moves no test.
import { SANDBOX_CARRIERS, sandboxLists } from '../../src/sandbox/index.ts';

/** Every list once, each carrier of a carrier list, and each charge-code version the sandbox serves plus the unpinned one. */
export function everySandboxTarget(): number {
  return sandboxLists.reduce((n, l) => n + (l.variants === 'none' ? 1 : l.variants === 'carrier' ? SANDBOX_CARRIERS.length : l.bundled().size + 1), 0);
}
