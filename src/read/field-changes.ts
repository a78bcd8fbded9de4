// A recorded entry change read as a person wants it: for a modification, each changed field with
// its value before and after; for an addition or removal, what the entry is. Plain text, for any
// face to escape for its medium.

/** How far a value is shown before it is cut (a field may hold a long text or a whole object). */
const VALUE_CHARS = 160;

export interface FieldChange {
  field: string;
  /** The value as JSON text, cut to VALUE_CHARS; '(none)' when the field was absent. */
  before: string;
  after: string;
}

function shown(payload: unknown, field: string, width: number): string {
  if (payload === null || typeof payload !== 'object' || !(field in payload)) return '(none)';
  const text = JSON.stringify((payload as Record<string, unknown>)[field]) ?? 'null';
  return text.length > width ? `${text.slice(0, width - 1)}…` : text;
}

/**
 * The changed fields of a modification, each with before and after; [] for other changes. `width`
 * cuts each value (a table cell wants less than a page).
 */
export function fieldChanges(change: { changed_fields: string[] | null; before: unknown; after: unknown }, width = VALUE_CHARS): FieldChange[] {
  return (change.changed_fields ?? []).map((field) => ({ field, before: shown(change.before, field, width), after: shown(change.after, field, width) }));
}

/** What an added, removed or reappeared entry is: its description or name, else its fields cut short. */
export function entrySummary(payload: unknown): string {
  if (payload === null || typeof payload !== 'object') return '';
  const p = payload as Record<string, unknown>;
  const named = p.description ?? p.name;
  const text = typeof named === 'string' ? named : JSON.stringify(p);
  return text.length > VALUE_CHARS ? `${text.slice(0, VALUE_CHARS - 1)}…` : text;
}
