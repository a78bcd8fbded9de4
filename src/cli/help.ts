// Help text, derived from the command table and the option table the parser reads (options.ts).
import type { CommandEntry } from './commands.ts';
import { commands } from './commands.ts';
import { commandOptions, type OptionSpec } from './options.ts';
import { wrap } from './output/wrap.ts';

/** Help is kept to this width so it reads in an 80–100 column terminal and in docs. */
export const HELP_WIDTH = 100;

/** Two columns: a left term padded to the widest, and its description wrapped beside it. */
function columns(rows: Array<[string, string]>): string[] {
  const left = Math.max(...rows.map(([term]) => term.length)) + 4;
  return rows.flatMap(([term, text]) =>
    wrap(text, HELP_WIDTH - left).map((line, i) => (i === 0 ? `  ${term.padEnd(left - 2)}${line}` : ' '.repeat(left) + line)),
  );
}

function optionTerm(name: string, spec: OptionSpec): string {
  return `${spec.short ? `-${spec.short}, ` : ''}--${name}${spec.type === 'string' ? ` ${spec.value ?? 'VALUE'}` : ''}`;
}

export function topHelp(): string {
  return [
    'usage: refsync <command> [options]',
    '       refsync <command> --help    refsync --version',
    '',
    'commands:',
    ...columns(commands.map((c) => [c.name, c.summary])),
    '',
    'Settings come from the environment and ./.env (see docs/configuration.md);',
    'docs/contract.md is the public contract.',
    '',
  ].join('\n');
}

export function commandHelp(command: CommandEntry): string {
  const options = Object.entries(commandOptions[command.name]) as Array<[string, OptionSpec]>;
  const usage = ['refsync', command.name, command.positionals, options.length ? '[options]' : undefined].filter(Boolean).join(' ');
  const rows: Array<[string, string]> = options.map(([name, spec]) => [optionTerm(name, spec), spec.help]);
  rows.push(['-h, --help', 'show this help']);
  return [
    `usage: ${usage}`,
    '',
    ...wrap(`${command.summary.charAt(0).toUpperCase()}${command.summary.slice(1)}.`, HELP_WIDTH),
    '',
    'options:',
    ...columns(rows),
    ...(command.notes?.length ? ['', ...command.notes.flatMap((n) => wrap(n, HELP_WIDTH))] : []),
    '',
  ].join('\n');
}
