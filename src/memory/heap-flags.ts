import { memoryLimit, cgroupLimitFiles, MEMORY_BUDGET_MB_RANGE } from './memory-limit.ts';

const MiB = 1024 * 1024;

/** The smallest old space refsync asks for, whatever the budget: a small list's sync fits it many times over. */
export const MIN_HEAP_LIMIT_MB = 128;

/**
 * V8's old-space limit for a process that syncs lists: half its memory budget.
 *
 * V8 collects the old generation again only once it has grown by a factor of what survived the
 * last full collection, and it takes that factor from the heap limit: about 1.3 at a 256 MiB
 * limit, up to 4 at 2 GiB and above. Node sizes the limit from the machine's memory (4 GiB on a
 * 24 GiB host), so a worker with a 512 MiB budget held up to 440 MiB of V8 heap, most of it
 * garbage, with one million-entry list in flight. At half the budget the same four loads peaked at
 * 177 MiB instead of 292, and no slower (docs/performance.md, P6). The other half is for what lives
 * outside the V8 heap: buffers, sockets, the code. A list whose live data would not fit ends the
 * process ("heap out of memory"), as the kernel would end one over its container's limit; the
 * budget's admissions keep large lists from sharing it.
 */
export function heapLimitMb(budgetBytes: number): number {
  return Math.max(MIN_HEAP_LIMIT_MB, Math.floor(budgetBytes / MiB / 2));
}

/**
 * The young generation's cap. On a machine with much memory V8 sizes the young generation up to
 * 128 MiB, and a sync keeps that much short-lived garbage around: capped at 2 MiB semi-spaces, a
 * million-entry sync peaked at 288 MiB instead of 391 MiB. But at 2 MiB a worker syncing many small
 * lists at once scavenged so often that what its lists hold while in flight (fetched, hashed, not
 * yet written) was promoted and collected again by the old generation: garbage collection was a
 * fifth of a P4 worker's CPU. At 8 MiB the same first-load slot of 1,000 sources took a quarter
 * less worker CPU (31.5-35.3 s against 44.4-45.6 s) and the million-entry syncs peaked 10-25 MiB
 * higher, within their budget (P3 at most 237 of 256 MiB, P6 260 of 512; docs/performance.md).
 */
export const SEMI_SPACE_FLAG = '--max-semi-space-size=8';

/** Either flag, given to Node by the person starting it: theirs is kept. */
const OLD_SPACE_FLAG = /^--max[-_]old[-_]space[-_]size(=|$)/;
const SEMI_SPACE_GIVEN = /^--max[-_]semi[-_]space[-_]size(=|$)/;

/** REFSYNC_MEMORY_BUDGET_MB as the configuration accepts it; anything else is left to the configuration to report. */
function budgetSetting(value: string | undefined): number | undefined {
  if (!value || !/^\d+$/.test(value.trim())) return undefined;
  const mb = Number(value.trim());
  return mb >= MEMORY_BUDGET_MB_RANGE.min && mb <= MEMORY_BUDGET_MB_RANGE.max ? mb : undefined;
}

/**
 * The heap flags this process should have been started with and was not: each is left out when
 * Node was given it already (on its command line or in NODE_OPTIONS).
 */
export function missingHeapFlags(execArgv: readonly string[], env: NodeJS.ProcessEnv, files = cgroupLimitFiles): string[] {
  const given = [...execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)];
  const missing: string[] = [];
  if (!given.some((arg) => OLD_SPACE_FLAG.test(arg))) {
    const budget = memoryLimit(budgetSetting(env.REFSYNC_MEMORY_BUDGET_MB), files);
    missing.push(`--max-old-space-size=${heapLimitMb(budget.bytes)}`);
  }
  if (!given.some((arg) => SEMI_SPACE_GIVEN.test(arg))) missing.push(SEMI_SPACE_FLAG);
  return missing;
}

/**
 * Restarts this process with its heap flags, when it lacks them. V8 reads them only as the process
 * starts, so the process replaces itself (process.execve: the same PID, so a container's
 * SIGTERM still reaches it, and the same standard streams) with one started with the flag. Called
 * before a command that syncs lists does anything else; where execve does not exist (Windows) the
 * process goes on with Node's own limit.
 */
export function relaunchWithHeapFlags(): void {
  if (typeof process.execve !== 'function' || process.platform === 'win32') return;
  const flags = missingHeapFlags(process.execArgv, process.env);
  if (flags.length === 0) return;
  try {
    process.execve(process.execPath, [process.execPath, ...flags, ...process.execArgv, ...process.argv.slice(1)], process.env);
  } catch {
    // execve refused (a sandbox that forbids it, say): the command runs on Node's own limits.
  }
}
