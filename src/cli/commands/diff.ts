// `refsync diff --list KEY --from T1 [--to T2]`: what changed in one list between two times, from the
// history in the database (refdata.entries_diff), in the words every other change uses: added,
// removed, modified. Like `versions diff` it reads DATABASE_URL and nothing else.
import { entriesDiff, type ListDiffRow } from '../../db/functions.ts';
import type { Queryable } from '../../db/database.ts';
import { fieldChanges } from '../../read/field-changes.ts';
import { formatTime } from '../../read/format-time.ts';
import { parseCommandArgs, UsageError } from '../args.ts';
import { databaseUrlFromEnv, openCliDatabase } from '../database.ts';
import { parseListArgs } from '../list-args.ts';
import { formatTable } from '../output/table.ts';
import { parseTimeArg } from '../time-arg.ts';
import { listFirstSynced } from '../../read/change-feed-sql.ts';

const usage = 'diff --list KEY --from ISO-8601 [--to ISO-8601] [--variant V] [--environment E] [--json]';
/** How much of a value a table cell shows. */
const VALUE_WIDTH = 40;

/** `field: before → after` for each changed field of a modified entry. */
function changedFieldsLine(row: ListDiffRow): string {
  return fieldChanges(row, VALUE_WIDTH)
    .map((c) => `${c.field}: ${c.before} → ${c.after}`)
    .join('; ');
}

/** When the list was first synced in the selection: before that, the history holds nothing to compare. */
async function firstSyncedAt(db: Queryable, listKey: string, variant: string | undefined, environment: string | undefined): Promise<Date | null> {
  const { rows } = await db.query<{ at: Date | null }>(listFirstSynced, [listKey, variant ?? null, environment ?? null]);
  return rows[0]?.at ?? null;
}

function printDiff(listKey: string, from: Date, to: Date, rows: ListDiffRow[]): void {
  const out = [`${listKey}: ${formatTime(from)} → ${formatTime(to)}`, ''];
  const withVariant = rows.some((r) => r.variant !== '');
  const lead = (r: ListDiffRow) => [r.environment, ...(withVariant ? [r.variant] : []), r.code ?? r.entry_key];
  const heads = ['environment', ...(withVariant ? ['variant'] : []), 'code'];
  for (const change of ['added', 'removed', 'modified'] as const) {
    const of = rows.filter((r) => r.change === change);
    if (!of.length) continue;
    const table =
      change === 'modified'
        ? formatTable(
            [...heads, 'before → after'],
            of.map((r) => [...lead(r), changedFieldsLine(r)]),
          )
        : formatTable(
            [...heads, 'description'],
            of.map((r) => [...lead(r), change === 'added' ? r.description_after : r.description_before]),
          );
    out.push(`${change} (${of.length}):`, table, '');
  }
  const n = (change: string) => rows.filter((r) => r.change === change).length;
  out.push(`${n('added')} added, ${n('removed')} removed, ${n('modified')} modified`);
  process.stdout.write(`${out.join('\n')}\n`);
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs('diff', argv);
  const lists = parseListArgs('diff', values.list);
  if (lists?.length !== 1) throw new UsageError(`diff: exactly one --list KEY is required (usage: refsync ${usage})`);
  const listKey = lists[0]!;
  const from = parseTimeArg('diff', '--from', values.from);
  if (!from) throw new UsageError(`diff: --from is required (usage: refsync ${usage})`);
  const to = parseTimeArg('diff', '--to', values.to) ?? new Date();
  if (to.getTime() < from.getTime()) throw new UsageError(`diff: --to ${formatTime(to)} is before --from ${formatTime(from)}`);

  const db = await openCliDatabase({ databaseUrl: databaseUrlFromEnv(), readOnly: true });
  try {
    const filter = { ...(values.variant !== undefined ? { variant: values.variant } : {}), ...(values.environment ? { environment: values.environment } : {}) };
    const rows = await entriesDiff(db, listKey, from, to, filter);
    const first = await firstSyncedAt(db, listKey, values.variant, values.environment);
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ list_key: listKey, from, to, first_synced_at: first, changes: rows }, null, 2)}\n`);
      return 0;
    }
    printDiff(listKey, from, to, rows);
    // Before its first sync refsync knew nothing of the list: every entry would read as added.
    if (!first) process.stderr.write(`refsync: diff: ${listKey} has never been synced in that selection\n`);
    else if (first.getTime() > from.getTime()) {
      process.stderr.write(`refsync: diff: ${listKey} was first synced ${formatTime(first)}, after --from; entries it held then show as added\n`);
    }
    return 0;
  } finally {
    await db.close();
  }
}
