// The error of a run some of whose lists did not sync, as `refsync status`, the run's page, its
// NOTIFY and its run_completed alert carry it. Lists stopped by one cause (an untrusted
// certificate, a refused login, an unreachable host) are said once: it read `accessorials (failed:
// TLS: ...); appointment_types (failed: TLS: ...); ...` 21 times over, cut at 4000 bytes.
import { groupAlike } from '../../util/alike.ts';
import { runReason } from '../../read/run-reason.ts';

/** A list of the run that has no ok snapshot in it: how its latest attempt ended. */
export interface RunProblem {
  list_key: string;
  variant: string;
  status: string;
  error: string | null;
}

/**
 * The run's lists that did not sync, for the opening statement of the run's refresh (runs.ts), as
 * a JSON array: its latest snapshot of each list that has no ok one (as refdata.run_progress counts
 * them failed), by list and variant. `runId` must be an integer (it is written into the SQL).
 */
export function runProblemsColumn(runId: number): string {
  if (!Number.isSafeInteger(runId)) throw new Error(`sync run id ${runId} is not an integer`);
  return `(select json_agg(json_build_object('list_key', x.list_key, 'variant', x.variant, 'status', x.status, 'error', x.error) order by x.list_key, x.variant)
     from (select distinct on (s.list_key, s.variant) s.list_key, s.variant, s.status, s.error
           from refdata.snapshots s
           where s.run_id = ${runId} and s.status <> 'ok'
             and not exists (select 1 from refdata.snapshots o
                             where o.run_id = ${runId} and o.list_key = s.list_key and o.variant = s.variant and o.status = 'ok')
           order by s.list_key, s.variant, s.id desc) x)`;
}

const label = (p: RunProblem) => (p.variant ? `${p.list_key}/${p.variant}` : p.list_key);

/**
 * `3 of 21 targets did not sync: ` and the problems, one part per cause: `hazmat (failed: ...)`
 * for a list alone in its cause, `2 lists failed (nmfc_codes, piece_types): ...` for several, and
 * `all 21 lists failed: ...` when the cause stopped every list of the run.
 */
export function runErrorText(failed: number, total: number, problems: readonly RunProblem[]): string {
  const parts = groupAlike(problems, (p) => [p.status, p.error]).map((group) => {
    const { status, error } = group[0]!;
    const reason = error === null ? '' : runReason(error);
    if (group.length === 1) return `${label(group[0]!)} (${status}${reason ? `: ${reason}` : ''})`;
    const lists = group.length === total ? `all ${total} lists ${status}` : `${group.length} lists ${status} (${group.map(label).join(', ')})`;
    return `${lists}${reason ? `: ${reason}` : ''}`;
  });
  return `${failed} of ${total} targets did not sync: ${parts.join('; ')}`;
}
