// `refsync sql ["SQL" | -c SQL] [--json] [--write]`: runs SQL against the database refsync writes,
// DATABASE_URL or else the embedded PGlite database in ./.refsync/pgdata, which no other client can
// open (PGlite is a library, not a server; one refsync command at a time holds it). One statement or
// several; with none given it reads them from stdin, or on a terminal opens a prompt (sql-repl.ts).
// Read-only unless --write: it runs as the DATABASE_URL role, refsync's owner, which may change
// or drop everything refsync keeps.
import { text } from 'node:stream/consumers';
import { EMBEDDED_DATA_DIR } from '../../db/database.ts';
import type { SqlSession } from '../../db/sql-session.ts';
import { parseCommandArgs, UsageError } from '../args.ts';
import { databaseUrlFromEnv, openCliDatabase } from '../database.ts';
import { sqlResultsJson, sqlResultsText } from '../output/sql-results.ts';
import { jsonText, terminalText } from '../output/terminal.ts';
import { sqlRepl } from '../sql-repl.ts';

/** Names the database for the prompt's greeting: host and database of the URL (never its password), or the folder. */
function describeDatabase(url: string | undefined): string {
  if (!url) return `the embedded database in ${EMBEDDED_DATA_DIR}`;
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return 'DATABASE_URL';
  }
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('sql', argv, true);
  if (values.command !== undefined && positionals.length) throw new UsageError('sql: give the SQL once: as the argument or with -c, not both');
  const given = (values.command ?? positionals.join(' ')).trim();
  const interactive = given === '' && process.stdin.isTTY === true;
  if (interactive && values.json) throw new UsageError('sql: --json needs the SQL as an argument or on stdin');
  const sql = interactive ? '' : given || (await text(process.stdin)).trim();
  if (!interactive && sql === '') throw new UsageError('sql: give the SQL, e.g. refsync sql "select * from refdata.list_sync_times"');
  const databaseUrl = databaseUrlFromEnv();
  const write = values.write === true;
  const db = await openCliDatabase({ databaseUrl, readOnly: true });
  let session: SqlSession | undefined;
  try {
    session = await db.sqlSession({ write });
    if (interactive) {
      await sqlRepl(session, describeDatabase(databaseUrl), write ? 'changes allowed (--write)' : 'read-only (--write to change data)');
      return 0;
    }
    const results = await session.run(sql);
    process.stdout.write(values.json ? `${jsonText(sqlResultsJson(results))}\n` : `${sqlResultsText(results)}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`refsync: sql: ${terminalText((err as Error).message)}\n`);
    return 1;
  } finally {
    await session?.close();
    await db.close();
  }
}
