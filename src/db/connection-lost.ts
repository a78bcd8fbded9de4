import pg from 'pg';
import { errorLine } from '../util/error-line.ts';

/**
 * SQLSTATEs that mean the server went away or would not take the session, not that the statement
 * was wrong: connection exceptions (class 08), the server shutting down or restarting (57P01-57P03),
 * too many connections (53300).
 */
const outage = /^(08...|57P0[123]|53300)$/;

/**
 * Whether a failed statement failed because the database could not be reached or the connection
 * broke (a restart, a failover, a network cut), so that the same statement can be tried again once
 * it is back. An error the server answered with for the statement itself is not: it would fail again.
 */
export function isConnectionLost(err: unknown): boolean {
  if (err instanceof pg.DatabaseError) return outage.test(err.code ?? '');
  if (!(err instanceof Error)) return false;
  const code = (err as NodeJS.ErrnoException).code;
  return (code !== undefined && socketCodes.has(code)) || driverMessages.test(err.message);
}

/** node's errors for a connection refused, reset, cut or not routable (an AggregateError carries the first's code). */
const socketCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** node-postgres's own: the server closed the socket, or no connection came within its timeout. */
const driverMessages = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection refused/i;

/** A connection error as one line: node's errors for a refused connection carry only a code, and an empty message. */
export function connectionErrorText(err: unknown): string {
  const e = err as { message?: string; code?: string };
  return errorLine(e?.message || e?.code || err);
}
