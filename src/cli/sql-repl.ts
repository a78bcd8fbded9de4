// `refsync sql` with no statement on a terminal: a small interactive prompt, as psql's. A statement
// runs when a line ends with `;`; `\q` (or Ctrl-D) quits; an error is printed and the prompt stays.
// Every statement runs on the session's one connection (db/sql-session.ts), so a transaction begun
// at the prompt stays one however long the pause before its COMMIT or ROLLBACK.
import { createInterface } from 'node:readline/promises';
import type { SqlSession } from '../db/sql-session.ts';
import { sqlResultsText } from './output/sql-results.ts';
import { terminalText } from './output/terminal.ts';

const HELP = 'Type SQL ending with ; to run it (several lines are fine), \\q or Ctrl-D to quit, \\? for this help.';

/** The prompt until the user quits; `where` names the database in the greeting, `mode` what it may do. */
export async function sqlRepl(session: SqlSession, where: string, mode: string): Promise<void> {
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: true });
  process.stdout.write(`refsync sql on ${where}, ${mode}. ${HELP}\n`);
  let pending: string[] = [];
  rl.setPrompt('refdata=> ');
  rl.prompt();
  for await (const line of rl) {
    const trimmed = line.trim();
    if (pending.length === 0 && trimmed === '\\q') break;
    if (pending.length === 0 && trimmed === '\\?') process.stdout.write(`${HELP}\n`);
    else if (trimmed !== '' || pending.length > 0) pending.push(line);
    if (pending.length > 0 && trimmed.endsWith(';')) {
      const text = pending.join('\n');
      pending = [];
      try {
        process.stdout.write(`${sqlResultsText(await session.run(text))}\n\n`);
      } catch (err) {
        process.stdout.write(`ERROR: ${terminalText((err as Error).message)}\n\n`);
      }
    }
    rl.setPrompt(pending.length > 0 ? 'refdata-> ' : 'refdata=> ');
    rl.prompt();
  }
  rl.close();
}
