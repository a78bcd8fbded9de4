import type { FeedRow } from '../../read/change-feed.ts';
import { formatTime } from '../../read/format-time.ts';
import { cellText, jsonText, shorten } from '../output/terminal.ts';

/** What a person recognises an entry by: its description or name, after the change, else before it. */
function description(row: FeedRow): string | null {
  for (const side of [row.after, row.before]) {
    for (const field of ['description', 'name']) {
      const value = side?.[field];
      if (typeof value === 'string') return value;
    }
  }
  return null;
}

/**
 * One change as one line of text, its position first so that a person can resume with
 * `--after POSITION`: position, detected, environment, list[/variant], change, code (the entry key
 * when it has no code), description (shortened), changed fields. Values are shown as cells are in the
 * tables (quoted when they would read differently, controls escaped).
 */
export function changeText(row: FeedRow): string {
  const list = row.variant ? `${row.list_key}/${row.variant}` : row.list_key;
  const text = description(row);
  return [
    row.position,
    formatTime(row.detected_at),
    cellText(row.environment),
    cellText(list),
    row.change,
    cellText(row.code ?? row.entry_key),
    text === null ? undefined : cellText(shorten(text, 60)),
    row.changed_fields?.length ? `[${row.changed_fields.map(cellText).join(',')}]` : undefined,
  ]
    .filter((part) => part !== undefined)
    .join('  ');
}

/** One change as one JSON object on one line (JSON Lines): every column of the feed, position first. */
export function changeJson(row: FeedRow): string {
  return jsonText(row, 0);
}
