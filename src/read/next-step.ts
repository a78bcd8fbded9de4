// What a person does about a list that needs one: the reason it is stuck and the exact command that
// resolves it. Shared by every face that shows a held or failed list.

export interface NextStep {
  /** What happened and what to check first, in a sentence or two. */
  advice: string;
  /** The command that resolves it. */
  command: string;
  /** The same, run in process instead of through the worker; absent when there is one way. */
  inProcess?: string;
}

/** The step for a target whose latest snapshot has this status; undefined when it needs none. */
export function nextStep(listKey: string, status: string): NextStep | undefined {
  if (status === 'held') {
    return {
      advice:
        'A fetch would have removed too much of this list, so it was not applied; readers still see the last ok data. ' +
        'Check the upstream, then apply the fetch on a machine with the worker\'s configuration (environment or REFSYNC_CONFIG). ' +
        'The command syncs the list for every configured source and applies whatever removal it finds.',
      command: `refsync sync --list ${listKey} --accept-removals`,
    };
  }
  if (status === 'failed' || status === 'unavailable') {
    return {
      advice:
        (status === 'unavailable' ? 'The service answered that it does not serve this list here (404). ' : 'The last fetch failed; readers still see the last ok data. ') +
        'Once the cause above is fixed, sync the list again through the running worker, or in process on a machine with its configuration.',
      command: `refsync trigger --list ${listKey}`,
      inProcess: `refsync sync --list ${listKey}`,
    };
  }
  return undefined;
}
