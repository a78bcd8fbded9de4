import type { SourceConfig } from '../../src/config/types.ts';
import { loadConfig } from '../../src/config/load.ts';
import { SANDBOX_MACHINE_ACCOUNT, type Sandbox } from '../../src/sandbox/index.ts';

/**
 * The environment a user would set to point refsync at this sandbox (machine account, its CA).
 * Extra variables override; pass REFSYNC_ENVIRONMENT to keep sources apart.
 */
export function sandboxEnv(sandbox: Sandbox, extra: Record<string, string> = {}): Record<string, string> {
  return {
    REFSYNC_BASE_URL: sandbox.url,
    REFSYNC_EMAIL: SANDBOX_MACHINE_ACCOUNT.email,
    REFSYNC_PASSWORD: SANDBOX_MACHINE_ACCOUNT.password,
    REFSYNC_CA_FILE: sandbox.caFile,
    REFSYNC_ENVIRONMENT: 'sandbox',
    LOG_LEVEL: 'warn',
    // A worker a test starts must not run its schedule mid-test: the hourly default fired at the top
    // of the hour during a fault test and synced the list its manual run was about to change.
    REFSYNC_SCHEDULE: '0 0 1 1 *',
    ...extra,
  };
}

/** One validated source for this sandbox, exactly as loadConfig builds it from the environment. */
export function sandboxSource(sandbox: Sandbox, extra: Record<string, string> = {}): SourceConfig {
  return loadConfig(sandboxEnv(sandbox, extra)).sources[0]!;
}
