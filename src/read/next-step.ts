// What a person does about a list that needs it: the reason it is stuck and the exact command that
// resolves it. Shared by every face that shows a held or failed list (refsync status --list, the
// status pages).
import { SCHEMA_HELD } from '../util/error-codes.ts';

/** A target's latest snapshot, as far as its next step depends on it. */
export interface StuckTarget {
  list_key: string;
  status: string;
  error_code: string | null;
  error: string | null;
}

export interface NextStep {
  /** What happened and what to check first, in a sentence or two. */
  advice: string;
  /** The command that resolves it. */
  command: string;
  /** The same, run in process instead of through the worker; absent when there is one way. */
  inProcess?: string;
}

/** A hold by the schema-change policy (its reason names the flag that accepts it), else by the removal guard. */
const heldForSchema = (t: StuckTarget) => t.error_code === SCHEMA_HELD || /--accept-schema\b/.test(t.error ?? '');

function heldStep(t: StuckTarget): NextStep {
  if (heldForSchema(t)) {
    return {
      advice:
        "The list's columns changed in a way its schema-change policy holds, so the fetch was not applied; readers still see the last ok data. " +
        "Check the change named in the reason (and the views built on the list), then accept it once on a machine with the worker's configuration.",
      command: `refsync sync --list ${t.list_key} --accept-schema`,
    };
  }
  return {
    advice:
      'A fetch would have removed too much of this list, so it was not applied; readers still see the last ok data. ' +
      "Check the upstream, then apply the fetch on a machine with the worker's configuration (environment or REFSYNC_CONFIG). " +
      'The command syncs the list for every configured source and applies whatever removal it finds.',
    command: `refsync sync --list ${t.list_key} --accept-removals`,
  };
}

/** The step for a target whose latest snapshot is held, failed or unavailable; undefined when it needs none. */
export function nextStep(t: StuckTarget): NextStep | undefined {
  if (t.status === 'held') return heldStep(t);
  if (t.status !== 'failed' && t.status !== 'unavailable') return undefined;
  const cause =
    t.status === 'unavailable'
      ? 'The service answered that it does not serve this list here (404). '
      : t.error_code === 'auth'
        ? 'The service refused the credential: check it with `refsync check-auth` first. '
        : 'The last fetch failed; readers still see the last ok data. ';
  return {
    advice: `${cause}Once the cause is fixed, sync the list again through the running worker, or in process on a machine with its configuration.`,
    command: `refsync trigger --list ${t.list_key}`,
    inProcess: `refsync sync --list ${t.list_key}`,
  };
}
