import { parseArgs } from 'node:util';
import { commandOptions, type CommandName } from './options.ts';

/** A bad command-line argument: reported in one line, exit 2. */
export class UsageError extends Error {
  readonly code = 'usage';
}

/**
 * node:util parseArgs over the command's options of options.ts (the table help prints), with its
 * errors turned into one-line usage errors. `label` names a subcommand in errors (`versions diff`).
 */
export function parseCommandArgs<K extends CommandName>(command: K, argv: string[], allowPositionals = false, label: string = command) {
  try {
    return parseArgs({ args: argv, options: commandOptions[command], allowPositionals, strict: true });
  } catch (err) {
    const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new UsageError(`${label}: ${message}`);
  }
}
