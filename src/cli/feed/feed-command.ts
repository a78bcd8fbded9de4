// `refsync changes --after POSITION | --follow | --consumer NAME [--exec CMD] | --commit POSITION`: the
// change feed from the shell (docs/change-feed.md; docs/terminal.md).
import { UsageError } from '../args.ts';
import type { Database } from '../../db/database.ts';
import { changeFeedEnd, FeedPositionError, FeedRestoredError, type FeedRow } from '../../read/change-feed.ts';
import { databaseUrlFromEnv, openCliDatabase } from '../database.ts';
import { terminalText } from '../output/terminal.ts';
import { runBatch } from './batch-exec.ts';
import { changeJson, changeText } from './change-line.ts';
import { ConsumerLease } from './consumer-lease.ts';
import { assertCanStore, commitPosition, ConsumerRefused, consumerState } from './consumer-store.ts';
import { startFeedListener } from './feed-listener.ts';
import { type BatchSink, FeedReader } from './feed-reader.ts';
import { LineOutput } from './line-output.ts';
import { onStopSignal } from '../stop-signals.ts';

/**
 * How often a follower reads even when no NOTIFY came: a transaction of another program that held
 * the feed back notifies nobody when it ends, and LISTEN hears nothing through a transaction pooler.
 */
const POLL_MS = 5_000;

export interface FeedCommand {
  after: string | undefined;
  fromStart: boolean;
  follow: boolean;
  consumer: string | undefined;
  /** --commit POSITION: store it for --consumer, and read nothing. */
  commit: string | undefined;
  /** --exec CMD: each batch piped to CMD, committed when it exits 0. */
  exec: string | undefined;
  batch: number | undefined;
  limit: number | undefined;
  json: boolean;
  lists: readonly string[] | null;
  environment: string | null;
}

const say = (line: string) => process.stderr.write(`refsync: changes: ${terminalText(line)}\n`);

/** A batch that --exec's command did not process: exit 1, nothing committed past the batch before. */
class BatchFailed extends Error {}

function checked(command: FeedCommand, databaseUrl: string | undefined): void {
  const { consumer, commit, exec } = command;
  if (consumer !== undefined && (consumer === '' || consumer.length > 200)) throw new UsageError('changes: --consumer NAME must be 1 to 200 characters');
  if (commit !== undefined) {
    if (consumer === undefined) throw new UsageError("changes: --commit POSITION stores a consumer's position: give --consumer NAME");
    if (command.after !== undefined || command.fromStart || command.follow || exec !== undefined) {
      throw new UsageError('changes: --commit reads nothing: give it with --consumer NAME alone');
    }
  }
  if (exec !== undefined && consumer === undefined) throw new UsageError('changes: --exec CMD commits each batch it processed: give --consumer NAME');
  if (exec === '') throw new UsageError('changes: --exec CMD needs a command');
  if (command.batch !== undefined && exec === undefined) throw new UsageError('changes: --batch N sizes the batches of --exec CMD');
  if (command.fromStart && command.after !== undefined) throw new UsageError('changes: give --after POSITION or --from-start, not both');
  // The embedded database is this process's own while it is open: no sync can write to it meanwhile.
  if (command.follow && !databaseUrl) {
    throw new UsageError(
      'changes: --follow needs a Postgres server (DATABASE_URL): no sync can write to the embedded database while another process has it open',
    );
  }
}

/**
 * Reads the feed from the position the command names (or its consumer committed), printing as it
 * goes; or commits a consumer's position. SIGINT and SIGTERM end it with exit 0 whenever they come,
 * a consumer's position untouched unless a batch was processed in full.
 */
export async function runFeed(command: FeedCommand): Promise<number> {
  let stopped = false;
  let reader: FeedReader | undefined;
  const stopOnSignal = onStopSignal(() => {
    stopped = true;
    reader?.stop();
  });
  try {
    const databaseUrl = databaseUrlFromEnv();
    checked(command, databaseUrl);
    const db = await openCliDatabase({ databaseUrl, readOnly: true });
    let lease: ConsumerLease | undefined;
    try {
      if (command.commit !== undefined) {
        await assertCanStore(db);
        await commitPosition(db, command.consumer!, command.commit, null);
        return 0;
      }
      if (stopped) return 0;
      let after: string | null;
      ({ lease, after } = await startingPoint(db, command));
      reader = feedReader(db, command, after, lease);
      if (stopped) reader.stop();
      const listener = command.follow && databaseUrl ? startFeedListener(databaseUrl, () => reader?.wakeup.wake()) : undefined;
      try {
        await reader.run();
      } finally {
        await listener?.stop();
      }
      if (reader.printed === 0 && !command.json && !command.follow && command.exec === undefined) say(nothingPrinted(reader.position, reader.start));
      return 0;
    } catch (err) {
      if (err instanceof FeedPositionError || err instanceof FeedRestoredError) throw new UsageError(`changes: ${err.message}`);
      if (err instanceof BatchFailed && stopped) {
        say(`stopped; ${err.message.replace(/^changes: /, '')}`);
        return 0;
      }
      throw err;
    } finally {
      await lease?.release();
      await db.close();
    }
  } finally {
    stopOnSignal();
  }
}

/** What a person is told when no line was printed: where the feed ended, so that they can resume. */
function nothingPrinted(readTo: string | null, after: string | null): string {
  if (readTo === null) return 'no changes yet';
  return readTo === after ? `no changes after ${readTo}` : `no change matched; read up to ${readTo}`;
}

/**
 * Where the run reads from, and a consumer's lease. A consumer reads after its committed position
 * (or --after, to read again from an earlier one); a new name needs --after or --from-start, so that a
 * typo is not all of history by accident. --follow alone starts at the end, as tail -f does.
 */
async function startingPoint(db: Database, command: FeedCommand): Promise<{ lease: ConsumerLease | undefined; after: string | null }> {
  const { consumer } = command;
  if (consumer === undefined) return { lease: undefined, after: command.after ?? (command.fromStart ? null : await changeFeedEnd(db)) };
  await assertCanStore(db);
  const known = await consumerState(db, consumer);
  if (!known && command.after === undefined && !command.fromStart) {
    throw new ConsumerRefused(
      `changes: consumer '${consumer}' is new: give --after POSITION (the last change it has processed) or --from-start (every change recorded); its position then moves only when you commit (--commit or --exec)`,
    );
  }
  if (known && command.fromStart) {
    throw new ConsumerRefused(
      `changes: consumer '${consumer}' has committed ${known.position}: --from-start is for a new name (read again under another name)`,
    );
  }
  const { lease, position } = await ConsumerLease.take(db, consumer, command.after ?? null);
  return { lease, after: command.after ?? position };
}

function feedReader(db: Database, command: FeedCommand, after: string | null, lease: ConsumerLease | undefined): FeedReader {
  const { lists, environment } = command;
  return new FeedReader({
    db,
    after,
    limit: command.limit,
    follow: command.follow,
    accepts: (row: FeedRow) => (lists === null || lists.includes(row.list_key)) && (environment === null || row.environment === environment),
    format: command.json ? changeJson : changeText,
    output: new LineOutput(process.stdout),
    ...(command.exec !== undefined && lease ? { batch: { sink: execSink(command.exec, lease, after), size: command.batch ?? 1_000 } } : {}),
    failure: () => lease?.lost,
    pollMs: POLL_MS,
    say,
  });
}

/** --exec: each batch piped to a run of CMD; its last position committed when CMD exits 0. */
function execSink(exec: string, lease: ConsumerLease, after: string | null): BatchSink {
  let committed = after ?? 'the start of history';
  return {
    async deliver(lines, lastPosition) {
      if (lines.length > 0) {
        const outcome = await runBatch(exec, lines, process.env);
        if (!outcome.ok) {
          throw new BatchFailed(
            `changes: --exec command ${outcome.why} on its batch of ${lines.length} change(s) after ${committed}; nothing committed past ${committed}`,
          );
        }
      }
      await lease.commit(lastPosition);
      committed = lastPosition;
    },
  };
}
