// The one vocabulary of refdata.snapshots.error_code: every kind of failure or hold a user can read
// there, in the `failed` alert, in a run's lists and in `refsync sync --json`, each meaning one thing.
// The error classes take their `code` from it; the column's comment and its dbt description are
// generated from it (src/db/migrate.ts, src/dbt/descriptions.ts), and test/util/error-codes.test.ts
// holds docs/reliability.md's table to it. It sits at the floor because every layer that fails a
// list (upstream, sync, columns, queue) or reads a hold (read) names a code.

/** Each code a snapshot can carry, and what it means. */
export const errorCodes = {
  auth: 'the service refused the credentials (login failed, or 401 after a new login and the API-key fallback)',
  tls: "the service's certificate is not trusted, expired or for another host, or the TLS handshake failed",
  http_status: 'the service answered an HTTP status that is not data (a 4xx other than 401; a 5xx or 429 after retries; a 404 is status unavailable)',
  protocol: 'the answer is not what the protocol promises: not JSON, truncated, a redirect, or an entry that is not an object or has no key',
  timeout: 'connecting, the headers or the body took longer than their timeout',
  deadline: 'a deadline of refsync passed: one request past REFSYNC_REQUEST_DEADLINE_S, or the whole target past REFSYNC_TARGET_DEADLINE_S',
  size: 'an answer or a list larger than a limit (its bytes or its entries; the error names the setting)',
  limit: 'one entry beyond a limit of its own: nesting depth, a string, a field name or its key too long',
  paging: 'paging that cannot be trusted: a loop, too many pages, a foreign next link, totals that do not add up',
  network: 'the connection was refused or reset, or the name did not resolve',
  config: 'a setting refsync cannot work with, e.g. an http:// base URL',
  origin_mismatch: 'a request or next link aimed at another origin than the configured one, refused before it was sent',
  duplicate_key: 'two different entries with the same key in one fetch',
  view_dependency: "the list's views must be dropped, and objects of the user depend on them",
  database_refused: "Postgres refused refsync's connection: its connection limit is reached",
  job_stalled: 'BullMQ failed the job outside the sync: it stalled too often (its worker died or froze)',
  job_failed: 'BullMQ failed the job outside the sync for another reason, which the error gives',
  held: 'held: the fetch would remove more entries than allowed (REFSYNC_MAX_REMOVED_FRACTION)',
  held_schema: "held by the list's schema policy (REFSYNC_SCHEMA_CHANGES): a change of its columns waits to be accepted",
  error: 'a failure of no kind above',
} as const;

/** A code of the table above, or `sqlstate_<SQLSTATE>`: Postgres refused the list's data (class 22, 23 or 54). */
export type ErrorCode = keyof typeof errorCodes | `sqlstate_${string}`;

/** What `sqlstate_<SQLSTATE>` means, beside the table. */
export const sqlstateCodes = {
  pattern: 'sqlstate_<SQLSTATE>',
  meaning: "Postgres refused the list's data (SQLSTATE class 22 data exception, 23 integrity constraint, 54 program limit)",
} as const;

/** The error code of a list held for too many removals. */
export const REMOVALS_HELD = 'held' satisfies ErrorCode;
/** The error code of a list held by its schema policy. */
export const SCHEMA_HELD = 'held_schema' satisfies ErrorCode;

/** Every code, `sqlstate_<SQLSTATE>` last, as the column's comment and its dbt description list them. */
export function errorCodeList(): string {
  return [...Object.keys(errorCodes), sqlstateCodes.pattern].join(', ');
}

/** refdata.snapshots.error_code's description: the same words in the column's comment and in dbt. */
export function errorCodeDescription(): string {
  return `Machine-readable kind of failure or hold (${errorCodeList()}); docs/reliability.md says what each means.`;
}

/**
 * A failure that belongs to one list (the service, its answer, its data, its views, its deadline):
 * recorded as that list's failed snapshot, never thrown past it. Every such error class extends it.
 */
export abstract class ListFailure extends Error {
  abstract readonly code: ErrorCode;
}
