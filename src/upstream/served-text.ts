/**
 * The text each batch of entries was parsed from, as the service sent it (a JSON array of whole
 * entries, list-splitter.ts): what a small list's served digest is made of (sync/collect/served-digest.ts).
 * Kept beside the batch, not in it, and let go with it.
 */
const servedTexts = new WeakMap<readonly unknown[], string>();

/** Notes the text `entries` was parsed from. */
export function withServedText(entries: unknown[], text: string): unknown[] {
  servedTexts.set(entries, text);
  return entries;
}

/** The text a batch of entries was parsed from; undefined for a batch not read from an answer. */
export function servedTextOf(entries: readonly unknown[]): string | undefined {
  return servedTexts.get(entries);
}
