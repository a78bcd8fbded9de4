import { afterAll, beforeAll } from 'vitest';
import type { ListKey } from '../../src/catalog/list-keys.ts';
import { targetsFor, type Target } from '../../src/catalog/catalog.ts';
import type { SourceConfig } from '../../src/config/types.ts';
import type { Database } from '../../src/db/database.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { canonicalJson, normalizeEntry } from '../../src/sync/collect/collect.ts';
import { runSync, type RunResult } from '../../src/sync/run/run-sync.ts';
import type { SyncTuning } from '../../src/sync/sync-target.ts';
import { createUpstreamClient, type UpstreamClient } from '../../src/upstream/index.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { sandboxSource } from '../helpers/source.ts';

/** A source on the sandbox with a client that fails fast (no long backoffs in tests). */
export function pipelineFixture(sandbox: Sandbox, env: Record<string, string> = {}) {
  const source: SourceConfig = sandboxSource(sandbox, env);
  const client: UpstreamClient = createUpstreamClient(source, undefined, {
    retry: { attempts: 2, baseDelayMs: 5, maxDelayMs: 20, maxRetryAfterMs: 50 },
    timeouts: { connectMs: 2000, headersMs: 2000, bodyMs: 2000 },
  });
  return {
    source,
    client,
    sync(db: Database, lists?: ListKey[], extra: { acceptRemovals?: boolean; acceptSchema?: boolean; tuning?: Partial<SyncTuning> } = {}): Promise<RunResult> {
      const options: Parameters<typeof runSync>[0] = { db, sources: [source], clientFor: () => client, trigger: 'cli', ...extra };
      if (lists) options.lists = lists;
      return runSync(options).then((r) => r[0]!);
    },
  };
}

export async function count(db: Database, table: string, where = 'true', params: unknown[] = []): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from refdata.${table} where ${where}`, params);
  return rows[0]!.n;
}

/**
 * One generated list of `entries` on a sandbox of its own, for a file's tests of the large-list
 * paths: the sandbox, the pipeline fixture and the list's target, set before the tests run.
 */
export function useGeneratedList(list: ListKey, entries: number) {
  const at = {} as { sb: Sandbox; fx: ReturnType<typeof pipelineFixture>; target: Target };
  beforeAll(async () => {
    at.sb = await useSandbox();
    at.sb.control.setGenerated(list, entries);
    at.fx = pipelineFixture(at.sb);
    at.target = targetsFor(at.fx.source, [list])[0]!;
  });
  afterAll(async () => {
    await at.fx?.client.close();
  });
  return at;
}

/**
 * The current rows of a target as the sandbox serves them and as stored, both by key, in the form
 * compared: the key and the canonical payload, and the entry hash too with `withHash`.
 */
export async function servedAndStored(db: Database, sb: Sandbox, target: Target, withHash = false) {
  const list = target.list.key;
  const pick = (key: string, payload: string, hash: string) => (withHash ? [key, payload, hash] : [key, payload]);
  const served = sb.control
    .getEntries(list)
    .map((e, i) => normalizeEntry(target.list, e, i))
    .map((n) => pick(n.entryKey, n.payload, n.digest))
    .sort(([a], [b]) => (a! < b! ? -1 : 1));
  const { rows } = await db.query<{ entry_key: string; payload: unknown; entry_hash: string }>(
    `select entry_key, payload, entry_hash from refdata.entries where list_key = $1 and valid_to is null order by entry_key collate "C"`,
    [list],
  );
  return { served, stored: rows.map((r) => pick(r.entry_key, canonicalJson(r.payload), r.entry_hash)) };
}

/** Each version of a list's rows in refdata.entries: where it lies and the transaction that wrote it. */
async function entryVersions(db: Database, list: ListKey): Promise<Set<string>> {
  const { rows } = await db.query<{ version: string }>(`select ctid::text || ' ' || xmin::text as version from refdata.entries where list_key = $1`, [list]);
  return new Set(rows.map((r) => r.version));
}

/**
 * Runs `sync` and counts the rows of the list in refdata.entries it wrote: inserted, or updated (an
 * update leaves a new version of the row, even one that changed nothing). Read from the data, so it
 * holds whichever way the rows took to the table.
 */
export async function countingEntriesWritten<T>(db: Database, list: ListKey, sync: () => Promise<T>): Promise<{ result: T; written: number }> {
  const before = await entryVersions(db, list);
  const result = await sync();
  const after = await entryVersions(db, list);
  return { result, written: [...after].filter((version) => !before.has(version)).length };
}
