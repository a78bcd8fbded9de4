import { parseCommandArgs, UsageError } from '../args.ts';
import { recentChanges, type ChangesFilter } from '../../read/changes-query.ts';
import { databaseUrlFromEnv, openCliDatabase } from '../database.ts';
import { runFeed } from '../feed/feed-command.ts';
import { parseListArgs } from '../list-args.ts';
import { formatTime } from '../../read/format-time.ts';
import { formatTable } from '../output/table.ts';
import { jsonText, shorten } from '../output/terminal.ts';
import { parseTimeArg } from '../time-arg.ts';

/** --limit (or --batch) as a whole number from 1 to `max`. */
function parseLimit(value: string, max: number, flag = '--limit'): number {
  const limit = Number(value);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > max) {
    throw new UsageError(`changes: ${flag} '${value}' must be a whole number from 1 to ${max}`);
  }
  return limit;
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs('changes', argv);
  const lists = parseListArgs('changes', values.list) ?? null;
  const environment = values.environment ?? null;
  const feed = [values.after, values.consumer, values.commit, values.exec, values.batch].some((v) => v !== undefined);
  if (feed || values.follow || values['from-start']) {
    // The feed's order is its positions: a time would be a cursor that skips (docs/contract.md).
    if (values.since !== undefined) throw new UsageError('changes: --since lists the newest changes; reading the feed, start with --after POSITION');
    const limit = values.limit === undefined ? undefined : parseLimit(values.limit, Number.MAX_SAFE_INTEGER);
    const batch = values.batch === undefined ? undefined : parseLimit(values.batch, 100_000, '--batch');
    return runFeed({
      after: values.after,
      fromStart: values['from-start'],
      follow: values.follow,
      consumer: values.consumer,
      commit: values.commit,
      exec: values.exec,
      batch,
      limit,
      json: values.json,
      lists,
      environment,
    });
  }
  const since = parseTimeArg('changes', '--since', values.since);
  // The newest changes are held in memory whole, to be laid out as a table.
  const limit = parseLimit(values.limit ?? '100', 100_000);
  return printRecent({ lists, since, environment, limit }, values.json);
}

/** The newest recorded changes, as a table or one JSON document. */
async function printRecent(filter: ChangesFilter, json: boolean): Promise<number> {
  const db = await openCliDatabase({ databaseUrl: databaseUrlFromEnv(), readOnly: true });
  try {
    const rows = await recentChanges(db, filter);
    if (json) {
      process.stdout.write(`${jsonText({ changes: rows })}\n`);
      return 0;
    }
    if (rows.length === 0) {
      process.stdout.write('no changes recorded for that selection\n');
      return 0;
    }
    process.stdout.write(
      `${formatTable(
        ['detected', 'environment', 'list', 'variant', 'change', 'code', 'description', 'fields'],
        rows.map((r) => [
          formatTime(r.detected_at),
          r.environment,
          r.list_key,
          r.variant || null,
          r.change,
          r.code ?? r.entry_key,
          r.description === null ? null : shorten(r.description, 60),
          r.changed_fields?.join(',') || null,
        ]),
      )}\n`,
    );
    return 0;
  } finally {
    await db.close();
  }
}
