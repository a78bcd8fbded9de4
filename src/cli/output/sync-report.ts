import type { RunResult } from '../../sync/run/run-sync.ts';
import type { TargetOutcome } from '../../sync/sync-target.ts';
import { terminalText } from './terminal.ts';

/** One progress line per finished target, for a person watching a terminal. */
export function progressLine(o: TargetOutcome, withEnvironment = false): string {
  const list = `${o.target.list.key}${o.target.variant ? ` ${o.target.variant}` : ''}`;
  const name = withEnvironment ? `${o.target.source.environment} ${list}` : list;
  const c = o.counts;
  const changes =
    o.status === 'changed' && o.baseline
      ? `first load`
      : `+${c.added} -${c.removed} ~${c.modified}${c.reappeared ? ` ↺${c.reappeared}` : ''}${c.reshaped ? ` ≈${c.reshaped}` : ''}`;
  const tail = [o.error, o.impactError]
    .filter(Boolean)
    .map((e) => `  ${terminalText(e)}`)
    .join('');
  return `${o.status.padEnd(11)} ${name.padEnd(withEnvironment ? 50 : 36)} pages ${String(o.pages).padStart(4)}  entries ${String(o.entryCount).padStart(7)}  ${changes.padEnd(16)} ${String(Math.round(o.durationMs)).padStart(6)} ms${tail}`;
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
        error: o.error ?? null,
        error_code: o.errorCode ?? null,
        impact_error: o.impactError ?? null,
      })),
    })),
  };
}
