// `refsync changes --after POSITION | --follow | --consumer NAME`: the change feed from the shell
// (docs/change-feed.md; docs/terminal.md).
import { UsageError } from '../args.ts';
import type { Database } from '../../db/database.ts';
import { changeFeedEnd, FeedPositionError, type FeedRow } from '../../read/change-feed.ts';
import { databaseUrlFromEnv, openCliDatabase } from '../database.ts';
import { terminalText } from '../output/terminal.ts';
import { changeJson, changeText } from './change-line.ts';
import { assertCanStore, storedPosition } from './consumer-store.ts';
import { startFeedListener } from './feed-listener.ts';
import { FeedReader } from './feed-reader.ts';
import { LineOutput } from './line-output.ts';
import { onStopSignal } from './stop-signals.ts';

/**
 * How often a follower reads even when no NOTIFY came: a transaction of another program that held
 * the feed back notifies nobody when it ends, and LISTEN hears nothing through a transaction pooler.
 */
const POLL_MS = 5_000;

export interface FeedCommand {
  after: string | undefined;
  follow: boolean;
  consumer: string | undefined;
  limit: number | undefined;
  json: boolean;
  lists: readonly string[] | null;
  environment: string | null;
}

const say = (line: string) => process.stderr.write(`refsync: changes: ${terminalText(line)}\n`);

function checked(command: FeedCommand, databaseUrl: string | undefined): void {
  if (command.consumer !== undefined && (command.consumer === '' || command.consumer.length > 200)) {
    throw new UsageError('changes: --consumer NAME must be 1 to 200 characters');
  }
  // The embedded database is this process's own while it is open: no sync can write to it meanwhile.
  if (command.follow && !databaseUrl) {
    throw new UsageError(
      'changes: --follow needs a Postgres server (DATABASE_URL): no sync can write to the embedded database while another process has it open',
    );
  }
}

/** Reads the feed from the position the command names (or its consumer stored), printing as it goes. */
export async function runFeed(command: FeedCommand): Promise<number> {
  const databaseUrl = databaseUrlFromEnv();
  checked(command, databaseUrl);
  const db = await openCliDatabase({ databaseUrl, readOnly: true });
  try {
    const reader = await feedReader(db, command);
    const listener = command.follow && databaseUrl ? startFeedListener(databaseUrl, () => reader.wakeup.wake()) : undefined;
    const stopOnSignal = onStopSignal(() => reader.stop());
    try {
      await reader.run();
    } finally {
      stopOnSignal();
      await listener?.stop();
    }
    if (reader.printed === 0 && !command.json && !command.follow) say(nothingPrinted(reader.position, reader.start));
    return 0;
  } catch (err) {
    if (err instanceof FeedPositionError) throw new UsageError(`changes: ${err.message}`);
    throw err;
  } finally {
    await db.close();
  }
}

/** What a person is told when no line was printed: where the feed ended, so that they can resume. */
function nothingPrinted(readTo: string | null, after: string | null): string {
  if (readTo === null) return 'no changes yet';
  return readTo === after ? `no changes after ${readTo}` : `no change matched; read up to ${readTo}`;
}

async function feedReader(db: Database, command: FeedCommand): Promise<FeedReader> {
  const { consumer, lists, environment } = command;
  if (consumer !== undefined) await assertCanStore(db);
  // --follow alone starts at the end, as tail -f does: a person waiting for the next sync's changes.
  const after = command.after ?? (consumer !== undefined ? await storedPosition(db, consumer) : await changeFeedEnd(db));
  return new FeedReader({
    db,
    after,
    limit: command.limit,
    follow: command.follow,
    accepts: (row: FeedRow) => (lists === null || lists.includes(row.list_key)) && (environment === null || row.environment === environment),
    format: command.json ? changeJson : changeText,
    output: new LineOutput(process.stdout),
    consumer,
    pollMs: POLL_MS,
    say,
  });
}
