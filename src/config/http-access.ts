// Who may reach the worker's status page and dashboard, and whether the dashboard may change the
// queue (docs/contract.md, "Deadlines and the worker's HTTP server").
import { ConfigError } from './errors.ts';

type Env = Record<string, string | undefined>;

export interface HttpAccess {
  /** REFSYNC_DASHBOARD_WRITE: the dashboard may pause, add, retry and remove; it needs a password. */
  dashboardWrite: boolean;
  /** REFSYNC_HTTP_ALLOWED_HOSTS, lower case: names the page and dashboard answer to besides localhost and IPs. */
  allowedHosts: string[];
}

const hostNamePattern = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,62})(\.[a-z0-9_]([a-z0-9_-]{0,62}))*$/;

function dashboardWrite(value: string | undefined): boolean {
  if (value === undefined || value === '' || /^(0|false|no)$/i.test(value)) return false;
  if (/^(1|true|yes)$/i.test(value)) return true;
  throw new ConfigError(`REFSYNC_DASHBOARD_WRITE: expected true or false, got '${value.slice(0, 40)}'`);
}

function allowedHosts(value: string | undefined): string[] {
  const names = (value ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase().replace(/\.$/, ''))
    .filter((s) => s !== '');
  for (const name of names) {
    if (!hostNamePattern.test(name)) {
      throw new ConfigError(`REFSYNC_HTTP_ALLOWED_HOSTS: '${name.slice(0, 80)}' is not a host name (give names like refsync.internal, no scheme or port)`);
    }
  }
  return [...new Set(names)];
}

/** The two settings, checked: a dashboard that can change the queue is refused without a password. */
export function httpAccessFromEnv(env: Env, dashboardPassword: string | undefined): HttpAccess {
  const access = { dashboardWrite: dashboardWrite(env.REFSYNC_DASHBOARD_WRITE), allowedHosts: allowedHosts(env.REFSYNC_HTTP_ALLOWED_HOSTS) };
  if (access.dashboardWrite && !dashboardPassword) {
    throw new ConfigError(
      'REFSYNC_DASHBOARD_WRITE: is true, but REFSYNC_DASHBOARD_PASSWORD is not set; a dashboard that can change the queue needs a password',
    );
  }
  return access;
}
