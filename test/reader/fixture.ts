// Data for the reader tests, written by the real pipeline from a sandbox over HTTPS.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ListKey } from '../../src/catalog/list-keys.ts';
import type { Database } from '../../src/db/database.ts';
import { CHARGE_CODE_VERSION_2024, CHARGE_CODE_VERSION_2025 } from '../../src/sandbox/index.ts';
import { runSync } from '../../src/sync/run/run-sync.ts';
import { createUpstreamClient } from '../../src/upstream/index.ts';
import type { Sandbox } from '../helpers/sandbox.ts';
import { sandboxSource } from '../helpers/source.ts';
import { testTempDir } from '../helpers/temp-dir.ts';

export const V2024 = CHARGE_CODE_VERSION_2024;
export const V2025 = CHARGE_CODE_VERSION_2025;
export const root = fileURLToPath(new URL('../../', import.meta.url));

/** One sync of the sandbox into db, keeping both charge-code versions; throws unless every target synced. */
export async function syncSandbox(db: Database, sb: Sandbox, lists?: ListKey[], environment = 'sandbox'): Promise<void> {
  const source = sandboxSource(sb, { REFSYNC_CHARGE_CODE_VERSIONS: `${V2024},${V2025}`, REFSYNC_ENVIRONMENT: environment });
  const client = createUpstreamClient(source);
  try {
    const options: Parameters<typeof runSync>[0] = { db, sources: [source], clientFor: () => client, trigger: 'cli' };
    if (lists) options.lists = lists;
    const [result] = await runSync(options);
    const bad = result!.outcomes.filter((o) => o.status !== 'changed' && o.status !== 'unchanged');
    if (bad.length) throw new Error(`sync failed: ${bad.map((o) => `${o.target.list.key}:${o.target.variant} ${o.status} ${o.error ?? ''}`).join('; ')}`);
  } finally {
    await client.close();
  }
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node bin/refsync.js ...args` as a user would, with only PATH, HOME and the given variables,
 * in a working directory of the caller's (default: a fresh temporary one, so no .env is read).
 */
export function refsync(args: string[], env: Record<string, string>, cwd = testTempDir('refsync-reader')): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [`${root}bin/refsync.js`, ...args],
      { cwd, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
