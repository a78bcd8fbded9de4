/**
 * Every REFSYNC_* variable refsync reads (docs/contract.md and the settings added beyond it). A test
 * checks that each name the source reads is here, so a new setting cannot be flagged as unknown.
 */
export const knownSettings = [
  'REFSYNC_ALERT_LISTS',
  'REFSYNC_ALERT_ON',
  'REFSYNC_API_KEY',
  'REFSYNC_API_KEY_FILE',
  'REFSYNC_API_KEY_SCHEME',
  'REFSYNC_BASE_URL',
  'REFSYNC_CARRIERS',
  'REFSYNC_CA_FILE',
  'REFSYNC_CHARGE_CODE_VERSIONS',
  'REFSYNC_CONCURRENCY',
  'REFSYNC_CONFIG',
  'REFSYNC_DASHBOARD_PASSWORD',
  'REFSYNC_DASHBOARD_PASSWORD_FILE',
  'REFSYNC_DASHBOARD_WRITE',
  'REFSYNC_DB_MAX_CONNECTIONS',
  'REFSYNC_EMAIL',
  'REFSYNC_ENVIRONMENT',
  'REFSYNC_HTTP_ALLOWED_HOSTS',
  'REFSYNC_HTTP_HOST',
  'REFSYNC_HTTP_PORT',
  'REFSYNC_IMPACT_TIMEOUT_S',
  'REFSYNC_LISTEN_DATABASE_URL',
  'REFSYNC_LISTEN_DATABASE_URL_FILE',
  'REFSYNC_LISTS',
  'REFSYNC_MAX_ENTRY_BYTES',
  'REFSYNC_MAX_LIST_BYTES',
  'REFSYNC_MAX_LIST_ENTRIES',
  'REFSYNC_MAX_REMOVED_FRACTION',
  'REFSYNC_MEMORY_BUDGET_MB',
  'REFSYNC_METRICS_SOURCE_LABEL',
  'REFSYNC_PASSWORD',
  'REFSYNC_PASSWORD_FILE',
  'REFSYNC_QUEUE_PREFIX',
  'REFSYNC_REDIS_CA_FILE',
  'REFSYNC_REQUEST_DEADLINE_S',
  'REFSYNC_RETAIN_ALERTS_DAYS',
  'REFSYNC_RETAIN_RUNS_DAYS',
  'REFSYNC_RETAIN_SNAPSHOTS_DAYS',
  'REFSYNC_SCHEDULE',
  'REFSYNC_SCHEMA_CHECK_INTERVAL_MS',
  'REFSYNC_SCHEMA_CHANGES',
  'REFSYNC_SHUTDOWN_TIMEOUT_MS',
  'REFSYNC_SOURCE_MAX_JOBS',
  'REFSYNC_SOURCE_NAME',
  'REFSYNC_TARGET_DEADLINE_S',
  'REFSYNC_TIMEZONE',
  'REFSYNC_WEBHOOK_ALLOW_PRIVATE',
  'REFSYNC_WEBHOOK_FORMAT',
  'REFSYNC_WEBHOOK_SECRET',
  'REFSYNC_WEBHOOK_SECRET_FILE',
  'REFSYNC_WEBHOOK_URL',
];

/** Edit distance between two names: how many single-character edits turn one into the other. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

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
      const [closest] = knownSettings.map((k) => [k, editDistance(name, k)] as const).sort((x, y) => x[1] - y[1]);
      const hint = closest && closest[1] <= Math.max(3, Math.floor(name.length / 3)) ? `; did you mean ${closest[0]}?` : '';
      return `${name.slice(0, 80)} is not a setting refsync knows${hint}`;
    });
}
