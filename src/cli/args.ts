import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A bad command-line argument: reported in one line, exit 2. */
export class UsageError extends Error {
  readonly code = 'usage';
}

/** node:util parseArgs with its errors turned into one-line usage errors. */
export function parseCommandArgs<T extends NonNullable<ParseArgsConfig['options']>>(
  command: string,
  argv: string[],
  options: T,
  allowPositionals = false,
) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (err) {
    const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new UsageError(`${command}: ${message}`);
  }
}
