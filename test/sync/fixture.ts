import type { ListKey } from '../../src/catalog/list-keys.ts';
import type { SourceConfig } from '../../src/config/types.ts';
import type { Database } from '../../src/db/database.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { runSync, type RunResult } from '../../src/sync/run-sync.ts';
import type { SyncTuning } from '../../src/sync/tuning.ts';
import { createUpstreamClient, type UpstreamClient } from '../../src/upstream/index.ts';
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
    sync(db: Database, lists?: ListKey[], extra: { acceptRemovals?: boolean; tuning?: Partial<SyncTuning> } = {}): Promise<RunResult> {
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
