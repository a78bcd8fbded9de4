import { pino, type Logger, type DestinationStream } from 'pino';
import { escapeControls } from './control-chars.ts';
import { checkLogLevel } from './log-level.ts';

export type { Logger };

/**
 * Paths pino censors wherever they appear. Secrets are also kept out of log calls by construction
 * (the client logs URLs and statuses, never headers or bodies); this is the second line of defence.
 */
export const redactPaths = [
  'password',
  'token',
  'apiKey',
  'api_key',
  'secret',
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  '*.password',
  '*.token',
  '*.apiKey',
  '*.api_key',
  '*.secret',
  '*.authorization',
  '*.webhookSecret',
];

export interface LoggerOptions {
  level?: string;
  name?: string;
  destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = checkLogLevel(options.level || process.env.LOG_LEVEL || 'info');
  const config = {
    level,
    name: options.name ?? 'refsync',
    redact: { paths: redactPaths, censor: '[redacted]' },
    base: { pid: process.pid },
    // pino escapes C0 controls in strings but not C1 or bidi overrides, which a terminal tailing the
    // log would act on; escaped the JSON way, each line stays the same JSON.
    hooks: { streamWrite: escapeControls },
  };
  return options.destination ? pino(config, options.destination) : pino(config, pino.destination(2));
}

/** A logger that writes nothing, for library callers that pass none. */
export const silentLogger: Logger = pino({ level: 'silent' });
