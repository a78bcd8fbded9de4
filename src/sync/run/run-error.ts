// The error of a run some of whose lists did not sync, as `refsync status`, the run's page, its
// NOTIFY and its run_completed alert carry it. Lists stopped by one cause (an untrusted
// certificate, a refused login, an unreachable host) are said once: it read `accessorials (failed:
// TLS: ...); appointment_types (failed: TLS: ...); ...` 21 times over, cut at 4000 bytes.
import type { Queryable } from '../../db/database.ts';
import { groupAlike } from '../../util/alike.ts';
import { causeOf, sharedMessage } from '../../util/failure-cause.ts';
import { runReason } from '../../read/run-reason.ts';
import { runProblemsQuery } from '../sql.ts';

/** A list of the run that has no ok snapshot in it: how its latest attempt ended. */
export interface RunProblem {
  list_key: string;
  variant: string;
  status: string;
  error: string | null;
  error_code: string | null;
}

/**
 * The run's lists that did not sync, by list and variant: its latest snapshot of each list that has
 * no ok one (as refdata.run_progress counts them failed). Read after the count, in a statement of its
 * own: a statement sees what was committed when it began, so the count's (which waits for the run
 * row's lock) could have missed a list that committed meanwhile, and the refresh that closes the run
 * would have worded its error without it for good.
 */
export async function runProblems(q: Queryable, runId: number): Promise<RunProblem[]> {
  const { rows } = await q.query<RunProblem>(runProblemsQuery, [runId]);
  return rows;
}

const label = (p: RunProblem) => (p.variant ? `${p.list_key}/${p.variant}` : p.list_key);

/**
 * `3 of 21 targets did not sync: ` and the problems, one part per cause: `hazmat (failed: ...)`
 * for a list alone in its cause, `2 lists failed (nmfc_codes, piece_types): ...` for several, and
 * `all 21 lists failed: ...` when the cause stopped every list of the run.
 */
export function runErrorText(failed: number, total: number, problems: readonly RunProblem[]): string {
  const parts = groupAlike(problems, (p) => [p.status, p.error === null ? null : causeOf(p.error, p.error_code)]).map((group) => {
    const { status } = group[0]!;
    const error = group[0]!.error === null ? null : sharedMessage(group.map((p) => p.error!));
    const reason = error === null ? '' : runReason(error);
    if (group.length === 1) return `${label(group[0]!)} (${status}${reason ? `: ${reason}` : ''})`;
    const lists = group.length === total ? `all ${total} lists ${status}` : `${group.length} lists ${status} (${group.map(label).join(', ')})`;
    return `${lists}${reason ? `: ${reason}` : ''}`;
  });
  return `${failed} of ${total} targets did not sync: ${parts.join('; ')}`;
}
