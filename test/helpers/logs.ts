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
