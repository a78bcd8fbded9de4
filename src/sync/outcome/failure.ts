import { UpstreamError } from '../../upstream/errors.ts';
import { cutToChars } from '../../util/bounded-text.ts';
import { ListFailure, type ErrorCode } from '../../util/error-codes.ts';

/** Postgres refused what one list's data asked it to store: that list fails, not the run. */
export class DataRefusedError extends ListFailure {
  readonly code: ErrorCode;
  readonly sqlstate: string;

  constructor(listKey: string, sqlstate: string, reason: string) {
    super(`${listKey}: Postgres refused the list's data: ${cutToChars(reason.split('\n')[0]!, 300)} (SQLSTATE ${sqlstate})`);
    this.code = `sqlstate_${sqlstate}`;
    this.sqlstate = sqlstate;
  }
}

/**
 * SQLSTATE classes the data of one list can provoke: 22 data exception (a value Postgres cannot
 * hold), 23 integrity constraint violation, 54 program limit exceeded (an index row too large).
 * Everything else (08 connection, 57 operator intervention, 53 resources, 40 rollback...) is the
 * database's state, not the list's, and is retried as an outage.
 */
const dataSqlstate = /^(?:22|23|54)[0-9A-Z]{3}$/;

function sqlstateOf(err: unknown): string | undefined {
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' && dataSqlstate.test(code) ? code : undefined;
}

/**
 * The one place that decides whether an error is the list's failure: the list failures proper
 * (service, answer, data shape, limits) as they are, and a Postgres error caused by the list's
 * data as a DataRefusedError. Undefined for anything else (a database outage, a bug).
 */
export function listFailureOf(err: unknown, listKey: string): ListFailure | undefined {
  if (isListFailure(err)) return err;
  const sqlstate = sqlstateOf(err);
  return sqlstate ? new DataRefusedError(listKey, sqlstate, (err as Error).message) : undefined;
}

/** Failures that belong to one list (the service, its answer, its data, its views): recorded, never thrown. */
export function isListFailure(err: unknown): err is ListFailure {
  return err instanceof ListFailure;
}

/** A list the service does not serve here (404): recorded as unavailable rather than failed. */
export function isUnavailable(err: unknown): boolean {
  return err instanceof UpstreamError && err.code === 'http_status' && err.status === 404;
}
