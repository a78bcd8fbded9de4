import { pino, type Logger } from 'pino';

export interface CapturedLogs {
  logger: Logger;
  /** Every line written so far (JSON text, as pino wrote it). */
  lines: string[];
  text(): string;
}

/**
 * A pino logger at `trace` that keeps its output in memory, with NO redaction configured: a secret
 * found in `text()` was logged by the code, not merely masked by pino.
 */
export function captureLogs(level = 'trace'): CapturedLogs {
  const lines: string[] = [];
  const logger = pino({ level }, { write: (line: string) => void lines.push(line) });
  return { logger, lines, text: () => lines.join('') };
}

/** How a sync's list reached the database, as its debug line tells it (sync-target.ts#logLoad). */
export interface LoadLine {
  loader: string;
  rowsWritten: number;
  fetches: number;
}

/**
 * The load lines a sync logged (the last one is the load that ended it), for the tests of a fast
 * path, which count the rows that path spared the database: no outcome or table holds that number.
 */
export function loadLines(logs: CapturedLogs): LoadLine[] {
  return logs.lines
    .map((line) => JSON.parse(line) as { msg?: string } & LoadLine)
    .filter((l) => l.msg === 'list loaded' || l.msg === 'list load rolled back')
    .map(({ loader, rowsWritten, fetches }) => ({ loader, rowsWritten, fetches }));
}
