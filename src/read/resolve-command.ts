// The command a person runs to move a held or failed list on, shown beside its reason by
// `refsync status --list` (and any other face that shows the reason).

export interface StuckTarget {
  list_key: string;
  status: string;
  error_code: string | null;
  error: string | null;
}

/**
 * The command that resolves the target's latest snapshot, or null when it needs none (ok). A held
 * list is applied by accepting what held it: a schema change (`--accept-schema`, when its reason
 * names that flag) or the removals (`--accept-removals`, the mass-removal guard). A failed list is
 * synced again once its cause is fixed; a refused credential is checked first with check-auth.
 */
export function resolvingCommand(t: StuckTarget): string | null {
  const sync = `refsync sync --list ${t.list_key}`;
  if (t.status === 'held') return /--accept-schema\b/.test(t.error ?? '') ? `${sync} --accept-schema` : `${sync} --accept-removals`;
  if (t.status !== 'failed' && t.status !== 'unavailable') return null;
  return t.error_code === 'auth' ? `refsync check-auth, then ${sync}` : sync;
}
