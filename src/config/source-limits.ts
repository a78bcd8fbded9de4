// How long one upstream request and one target may take, and how much one streamed list may hold
// (docs/contract.md "Deadlines and the worker's HTTP server"; docs/reliability.md). Set in the
// environment, or per source in REFSYNC_CONFIG under the field names below.
import { z } from 'zod';

export interface SourceLimits {
  /** REFSYNC_REQUEST_DEADLINE_S: one upstream request, from its first byte sent to its body's last byte read. */
  requestDeadlineS: number;
  /** REFSYNC_TARGET_DEADLINE_S: one target, all its pages and its write. */
  targetDeadlineS: number;
  /** REFSYNC_MAX_ENTRY_BYTES: one entry of a list as served (and a page's envelope besides its entries). */
  maxEntryBytes: number;
  /** REFSYNC_MAX_LIST_ENTRIES: the entries of one list variant, all pages together. */
  maxListEntries: number;
  /** REFSYNC_MAX_LIST_BYTES: the bytes of one list variant's answers, all pages together. */
  maxListBytes: number;
}

type LimitField = keyof SourceLimits;

/** Each limit: its environment variable, default, and the most it may be set to. */
export const limitSettings: Record<LimitField, { env: string; fallback: number; max: number; whole: boolean }> = {
  requestDeadlineS: { env: 'REFSYNC_REQUEST_DEADLINE_S', fallback: 600, max: 7 * 24 * 3600, whole: false },
  targetDeadlineS: { env: 'REFSYNC_TARGET_DEADLINE_S', fallback: 3600, max: 7 * 24 * 3600, whole: false },
  // A 4 Mi-character description (the entry limits, src/sync/collect/collect.ts) written with \u escapes is 24 MiB of JSON.
  maxEntryBytes: { env: 'REFSYNC_MAX_ENTRY_BYTES', fallback: 32 * 2 ** 20, max: 2 ** 30, whole: true },
  // Ten times the largest list measured (1,000,000 entries, ~100 MB; docs/performance.md).
  maxListEntries: { env: 'REFSYNC_MAX_LIST_ENTRIES', fallback: 10_000_000, max: 2 ** 31, whole: true },
  maxListBytes: { env: 'REFSYNC_MAX_LIST_BYTES', fallback: 4 * 2 ** 30, max: 2 ** 50, whole: true },
};

const fields = Object.keys(limitSettings) as LimitField[];

/** The limits as the environment gives them (undefined when unset), to stand under each source. */
export function limitsFromEnv(env: Record<string, string | undefined>): Record<LimitField, string | undefined> {
  return Object.fromEntries(fields.map((f) => [f, env[limitSettings[f].env] === '' ? undefined : env[limitSettings[f].env]])) as Record<
    LimitField,
    string | undefined
  >;
}

/** The environment variable behind each limit field, to name it in errors. */
export const limitEnvNames: Record<string, string> = Object.fromEntries(fields.map((f) => [f, limitSettings[f].env]));

function limitSchema({ max, whole }: { max: number; whole: boolean }) {
  const n = z.coerce.number().positive('must be above 0').max(max);
  return (whole ? n.int('must be a whole number') : n).optional();
}

/** The zod fields of a source for the limits. */
export const limitFields = Object.fromEntries(fields.map((f) => [f, limitSchema(limitSettings[f])])) as Record<LimitField, ReturnType<typeof limitSchema>>;

/** A source's limits with the defaults for what it does not set. */
export function limitsOf(source: Partial<SourceLimits>): SourceLimits {
  return Object.fromEntries(fields.map((f) => [f, source[f] ?? limitSettings[f].fallback])) as unknown as SourceLimits;
}
