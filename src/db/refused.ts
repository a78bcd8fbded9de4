// Postgres saying no to a new connection: its connection limit reached (`too many clients already`,
// or only superuser-reserved slots left), or a server starting up or shutting down. Not a network
// fault: the operator looks at max_connections and who holds the slots, not at the route to the
// server, so it has an error code and words of its own (docs/production.md, "Managed Postgres").
import { describeConnectError } from './tls.ts';
import { isConnectionLost } from './connection-lost.ts';

/**
 * SQLSTATEs of a refused connection: 53300 too_many_connections (reserved slots included), 53000
 * insufficient_resources, 57P03 cannot_connect_now (starting up, shutting down, in recovery).
 */
const REFUSED = new Set(['53300', '53000', '57P03']);

/** Whether err is the server refusing a new connection (not a query failing on one it gave). */
export function isConnectionRefusal(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | undefined;
  if (typeof e?.code === 'string' && REFUSED.has(e.code)) return true;
  return typeof e?.message === 'string' && /remaining connection slots are reserved|too many clients already/.test(e.message);
}

/** The refusal in words: the server's own reason, and where to look. */
export function describeRefusal(err: unknown): string {
  const e = err as { code?: string; message?: string };
  const reason = String(e?.message ?? err).split('\n')[0];
  if (e?.code === '57P03') return `Postgres refused a new connection: the server is starting up or shutting down (${reason})`;
  return `Postgres refused a new connection: the server's connection limit (max_connections) is reached (${reason})`;
}

/** A connection the server refused for as long as the pool waited for one: fails the work that needed it. */
export class DatabaseRefusedError extends Error {
  readonly code = 'database_refused';

  constructor(cause: unknown, waitedMs: number) {
    super(`${describeRefusal(cause)}; waited ${Math.round(waitedMs / 1000)} s for a connection`, { cause });
  }
}

/**
 * The error a command or the worker stops with when it cannot open the database: a refusal in its
 * own words, anything else as `unreachable` (a line naming the network, say) and the cause.
 */
export function connectFailure(err: unknown, unreachable: string): Error {
  if (err instanceof DatabaseRefusedError) return err;
  if (isConnectionRefusal(err)) return new Error(describeRefusal(err));
  return new Error(`${unreachable}: ${describeConnectError(err)}`);
}

/**
 * Why the database failed a readiness probe, in words of refsync's own for a caller that gave no
 * credentials (/readyz): never the server's text, which can name roles, databases and settings.
 */
export function databaseProbeFailure(err: unknown): string {
  if (isConnectionRefusal(err)) {
    return (err as { code?: string }).code === '57P03'
      ? 'database refused a connection: the server is starting up or shutting down'
      : "database refused a connection: the server's connection limit (max_connections) is reached";
  }
  if (isConnectionLost(err) || /no answer within/.test(String((err as Error)?.message))) return 'database unreachable';
  return 'database error';
}
