import type { RunResult } from '../../sync/run/run-sync.ts';
import { isFailedOutcome, outcomeError, type FailedOutcome, type TargetOutcome } from '../../sync/outcome/target-outcome.ts';
import { groupAlike } from '../../util/alike.ts';
import { causeOf, sharedMessage } from '../../util/failure-cause.ts';
import { terminalText } from './terminal.ts';
import { targetLabel } from '../../catalog/catalog.ts';

/** One progress line per finished target, for a person watching a terminal. */
export function progressLine(o: TargetOutcome, withEnvironment = false): string {
  const name = targetLabel(o.target, withEnvironment);
  const c = o.counts;
  const changes =
    o.status === 'changed' && o.baseline
      ? `first load`
      : `+${c.added} -${c.removed} ~${c.modified}${c.reappeared ? ` ↺${c.reappeared}` : ''}${c.reshaped ? ` ≈${c.reshaped}` : ''}`;
  const tail = [outcomeError(o)?.error, o.impactError]
    .filter(Boolean)
    .map((e) => `  ${terminalText(e)}`)
    .join('');
  return `${o.status.padEnd(11)} ${name.padEnd(withEnvironment ? 50 : 36)} pages ${String(o.pages).padStart(4)}  entries ${String(o.entryCount).padStart(7)}  ${changes.padEnd(16)} ${String(Math.round(o.durationMs)).padStart(6)} ms${tail}`;
}

/**
 * Whether a finished target's line waits for the end of its run, where failures are grouped by
 * their error (failureLines).
 */
export function isGroupedFailure(o: TargetOutcome): o is FailedOutcome {
  return isFailedOutcome(o);
}

/**
 * A run's failed lists grouped by their error. A cause the lists share (an untrusted certificate, a
 * refused login, an unreachable host) is said once, with the lists it stopped, not as a row per
 * list ending in the same message; a failure of its own keeps its ordinary line.
 */
export function failureLines(result: RunResult, withEnvironment = false): string[] {
  const groups = groupAlike(result.outcomes.filter(isGroupedFailure), (o) => [o.status, causeOf(o.error, o.errorCode)]);
  return groups.flatMap((group) => {
    const first = group[0]!;
    if (group.length === 1) return [progressLine(first, withEnvironment)];
    const all = group.length === result.outcomes.length;
    const head = `${first.status.padEnd(11)} ${all ? `all ${group.length} lists` : `${group.length} lists`}: ${terminalText(sharedMessage(group.map((o) => o.error)))}`;
    return all ? [head] : [head, `${' '.repeat(12)}${group.map((o) => terminalText(targetLabel(o.target, withEnvironment))).join(', ')}`];
  });
}

export function summaryLine(result: RunResult): string {
  const by = (s: string) => result.outcomes.filter((o) => o.status === s).length;
  return `run ${result.runId} (${result.source.environment}): ${result.status} — ${by('changed')} changed, ${by('unchanged')} unchanged, ${by('held')} held, ${by('failed') + by('unavailable')} failed, of ${result.outcomes.length} lists`;
}

/** The machine-readable form of `refsync sync --json`. */
export function runJson(results: RunResult[]): unknown {
  return {
    runs: results.map((r) => ({
      run_id: r.runId,
      source: r.source.name,
      environment: r.source.environment,
      status: r.status,
      targets: r.outcomes.map((o) => ({
        list_key: o.target.list.key,
        variant: o.target.variant,
        status: o.status,
        snapshot_id: o.snapshotId ?? null,
        baseline: o.baseline,
        entries: o.entryCount,
        pages: o.pages,
        added: o.counts.added,
        removed: o.counts.removed,
        modified: o.counts.modified,
        reappeared: o.counts.reappeared,
        reshaped: o.counts.reshaped,
        duration_ms: Math.round(o.durationMs),
        error: outcomeError(o)?.error ?? null,
        error_code: outcomeError(o)?.errorCode ?? null,
        impact_error: o.impactError ?? null,
      })),
    })),
  };
}
