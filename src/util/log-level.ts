import { ConfigError } from './config-error.ts';

/** pino's levels, and `silent`; anything else would make pino throw its own message at start. */
export const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** LOG_LEVEL checked before pino sees it, so a typo is a one-line configuration error naming it. */
export function checkLogLevel(value: string): string {
  const level = value.toLowerCase();
  if (!(logLevels as readonly string[]).includes(level)) {
    throw new ConfigError(`LOG_LEVEL: '${value.slice(0, 40)}' is not a log level; one of: ${logLevels.join(', ')}`);
  }
  return level;
}
