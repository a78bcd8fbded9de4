import { loadDotEnv } from '../config/dotenv.ts';
import { relaunchWithHeapFlags } from '../memory/heap-flags.ts';
import { shippedSchemaVersion } from '../db/schema-version.ts';
import { ConfigError } from '../config/errors.ts';
import { unknownSettingWarnings } from '../config/known-settings.ts';
import { UsageError } from './args.ts';
import { commands } from './commands.ts';
import { terminalText } from './output/terminal.ts';
import { commandHelp, topHelp } from './help.ts';
import { packageVersion } from '../util/package-version.ts';
import { closestName } from '../util/closest-name.ts';

const isHelp = (arg: string | undefined) => arg === '--help' || arg === '-h';

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V') {
    const schema = shippedSchemaVersion();
    process.stdout.write(`refsync ${packageVersion} (schema version ${schema.version}: ${schema.tag})\n`);
    return 0;
  }
  if (!name || isHelp(name) || name === 'help') {
    const helpFor = name === 'help' ? commands.find((c) => c.name === rest[0]) : undefined;
    process.stdout.write(helpFor ? commandHelp(helpFor) : topHelp());
    return name ? 0 : 2;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    const near = closestName(
      name,
      commands.map((c) => c.name),
    );
    process.stderr.write(`refsync: unknown command '${terminalText(name)}'${near ? `; did you mean ${near}?` : ''} (see 'refsync --help')\n`);
    return 2;
  }
  // Help is answered before anything is loaded or connected: it needs no settings.
  if (rest.some(isHelp)) {
    process.stdout.write(commandHelp(command));
    return 0;
  }
  loadDotEnv();
  // After .env, which may set REFSYNC_MEMORY_BUDGET_MB; before anything is connected or said.
  if (command.syncsLists) relaunchWithHeapFlags();
  for (const warning of unknownSettingWarnings(process.env)) process.stderr.write(`refsync: warning: ${terminalText(warning)}\n`);
  const mod = await command.load();
  return mod.run(rest);
}

/**
 * No command ends without settling. Node exits as soon as nothing is left to wait for, even while a
 * command still awaits a promise that nothing will ever settle (a request a library dropped, say);
 * the exit code would then be 0 with the work not done. 'beforeExit' fires exactly then: the
 * command has not returned, so it fails, naming the command.
 */
function exitOneIfUnsettled(commandName: string): () => void {
  let settled = false;
  const onEmptyLoop = () => {
    if (settled) return;
    process.stderr.write(
      `refsync: ${commandName}: ended without finishing its work (it was waiting on something that never came); nothing was reported as done\n`,
    );
    process.exit(1);
  };
  process.once('beforeExit', onEmptyLoop);
  return () => {
    settled = true;
  };
}

const settle = exitOneIfUnsettled(commands.find((c) => c.name === process.argv[2])?.name ?? 'refsync');

// Bad configuration and bad arguments end with one line and exit 2; anything else is a bug or an
// outage and keeps its message (never a secret: errors are built without them) on one line too.
main(process.argv.slice(2))
  .finally(settle)
  .then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      if (err instanceof ConfigError || err instanceof UsageError) {
        process.stderr.write(`refsync: ${terminalText(err.message)}\n`);
        process.exitCode = 2;
        return;
      }
      const message = err instanceof Error ? err.message : String(err);
      process.stderr.write(`refsync: ${terminalText(message)}\n`);
      process.exitCode = 1;
    },
  );
