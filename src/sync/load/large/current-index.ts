import type { Target } from '../../../catalog/catalog.ts';
import { copyOut, type CopyDataHandler } from '../../../db/copy-out.ts';
import type { Connection } from '../../../db/database.ts';
import type { NormalizedEntry } from '../../collect/collect.ts';
import { copyCurrentIndex, currentIndexOpened, openCurrentIndexRead } from '../load-sql.ts';

/** What the apply needs of an index: which state it reflects, and the current rows no fetched entry matched. */
export interface IndexMatch {
  generation: number;
  unseenIds: number[];
}

/** Characters of the base64 entry digest compared (96 bits): a false match is beyond any realistic odds. */
const DIGEST_CHARS = 16;
const base64Value = new Int8Array(128).fill(-1);
for (const [i, c] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries()) {
  base64Value[c.charCodeAt(0)] = i;
}

/**
 * A table slot from the first four characters (24 bits) of a base64 digest, given as their word()
 * (a char code a byte, the first lowest): the stored rows and the fetched entries both have it.
 */
function slotOf(first: number, mask: number): number {
  const a = base64Value[first & 127]!;
  const b = base64Value[(first >> 8) & 127]!;
  const c = base64Value[(first >> 16) & 127]!;
  const d = base64Value[(first >>> 24) & 127]!;
  return ((a << 18) | (b << 12) | (c << 6) | d) & mask;
}

/** FNV-1a over UTF-16 code units: the key must match too, or a change to a list's key rule would go unseen. */
function keyHash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** COPY's text format escapes, undone (COPY TO only ever writes these). */
const copyEscapes: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\' };
function uncopy(text: string): string {
  return text.includes('\\') ? text.replace(/\\(.)/g, (_, c: string) => copyEscapes[c] ?? c) : text;
}

/**
 * A row of the index is one record of RECORD_WORDS 32-bit words: the key hash, then the first
 * DIGEST_CHARS characters of the digest, four to a word. A lookup then touches one slot and one
 * record (two cache misses at a million rows, where separate arrays cost four or five).
 */
const RECORD_WORDS = 1 + DIGEST_CHARS / 4;

/** Four characters (char codes below 256: base64) as one 32-bit word. */
function word(a: number, b: number, c: number, d: number): number {
  return a | (b << 8) | (c << 16) | (d << 24);
}

/**
 * The word() of a digest's four characters from `at`. No closure over the digest: one made per
 * entry matched was about 90 bytes of garbage each, a scavenge every 20,000 entries.
 */
function digestWord(digest: string, at: number): number {
  return word(digest.charCodeAt(at), digest.charCodeAt(at + 1), digest.charCodeAt(at + 2), digest.charCodeAt(at + 3));
}

/** Whether the row's digest starts with these four words. */
function digestIs(records: Int32Array, row: number, w0: number, w1: number, w2: number, w3: number): boolean {
  const at = row * RECORD_WORDS;
  return records[at + 1] === w0 && records[at + 2] === w1 && records[at + 3] === w2 && records[at + 4] === w3;
}

/** The hash table of a set of rows: open addressing, 0 empty, else the row + 1. */
interface RowTable {
  slots: Int32Array;
  mask: number;
}

/** An empty table with room for `rows` rows at a load of at most one half. */
function emptyTable(rows: number): RowTable {
  let capacity = 16;
  while (capacity < rows * 2) capacity *= 2;
  return { slots: new Int32Array(capacity), mask: capacity - 1 };
}

/** Puts a row in the table at the slot its digest's first word gives (its record's word 1). */
function place(table: RowTable, records: Int32Array, row: number): void {
  let slot = slotOf(records[row * RECORD_WORDS + 1]!, table.mask);
  while (table.slots[slot] !== 0) slot = (slot + 1) & table.mask;
  table.slots[slot] = row + 1;
}

/**
 * The index's rows: typed arrays that double when the hint was short, the hash table, and which
 * rows a fetched entry matched, all filled as each row comes. Built after the COPY's last row, the
 * table was 40-90 ms of the main thread at a million rows (random writes over two million slots);
 * row by row it is done while Postgres is still sending the rest, and the rows read so far can be
 * matched already.
 */
class IndexRows {
  ids: Float64Array;
  records: Int32Array;
  table: RowTable;
  /** 1 for a row some fetched entry matched. */
  seen: Uint8Array;
  size = 0;

  constructor(expected: number) {
    const capacity = Math.max(16, expected);
    this.ids = new Float64Array(capacity);
    this.records = new Int32Array(capacity * RECORD_WORDS);
    this.seen = new Uint8Array(capacity);
    this.table = emptyTable(capacity);
  }

  /** One row: its id, its key's hash, and its digest as the bytes digest[start, end) of a COPY buffer. */
  push(id: number, keyHash: number, digest: Buffer, start: number, end: number): void {
    if (this.size === this.ids.length) this.#grow();
    const at = this.size * RECORD_WORDS;
    this.ids[this.size] = id;
    this.records[at] = keyHash;
    if (end - start === DIGEST_CHARS) {
      // word() of four bytes is the little-endian int32 they make.
      for (let w = 0; w < DIGEST_CHARS / 4; w++) this.records[at + 1 + w] = digest.readInt32LE(start + 4 * w);
    } else {
      // A digest shorter than DIGEST_CHARS (never written by refsync) reads as zeros and matches nothing.
      const c = (i: number) => (start + i < end ? digest[start + i]! : 0);
      for (let w = 0; w < DIGEST_CHARS / 4; w++) this.records[at + 1 + w] = word(c(4 * w), c(4 * w + 1), c(4 * w + 2), c(4 * w + 3));
    }
    place(this.table, this.records, this.size);
    this.size += 1;
  }

  /** Twice the room, and the table built again for it (only when the last snapshot undercounted the rows). */
  #grow(): void {
    const ids = new Float64Array(this.ids.length * 2);
    const records = new Int32Array(ids.length * RECORD_WORDS);
    const seen = new Uint8Array(ids.length);
    ids.set(this.ids);
    records.set(this.records);
    seen.set(this.seen);
    this.ids = ids;
    this.records = records;
    this.seen = seen;
    this.table = emptyTable(ids.length);
    for (let row = 0; row < this.size; row++) place(this.table, records, row);
  }
}

/**
 * Reads the whole `id TAB key TAB digest` lines of buf[at, end) into `rows`; returns where the first
 * incomplete line starts. One pass over the bytes per line, and no string for the id or for a key
 * that is ASCII without an escape (its UTF-16 code units are its bytes): at a million rows, two
 * million strings and three native searches a line cost about twice the time. Text, not binary:
 * a binary COPY's rows are a fifth longer, and a million of them took 8-12% longer to read (the
 * read waits on Postgres either way).
 */
function readCopyLines(buf: Buffer, rows: IndexRows, at: number, end: number): number {
  for (let eol = buf.indexOf(10, at); eol !== -1 && eol < end; eol = buf.indexOf(10, at)) {
    let i = at;
    let id = 0;
    // A bigint's decimal digits: exact below 2^53, as Number() of them was.
    for (let byte = buf[i]!; byte !== 9 && i < eol; byte = buf[++i]!) id = id * 10 + (byte - 48);
    const keyStart = ++i;
    let hash = 0x811c9dc5;
    let plain = true;
    for (let byte = buf[i]!; byte !== 9 && i < eol; byte = buf[++i]!) {
      if (byte >= 0x80 || byte === 0x5c) plain = false;
      hash = Math.imul(hash ^ byte, 0x01000193);
    }
    const key = plain ? hash >>> 0 : keyHash(uncopy(buf.toString('utf8', keyStart, i)));
    rows.push(id, key, buf, i + 1, Math.min(i + 1 + DIGEST_CHARS, eol));
    at = eol + 1;
  }
  return at;
}

/**
 * The COPY of the index, message by message (copyOut): Postgres sends a line a message, so a line
 * is read where it lies in the socket's chunk; one split over messages waits here for the rest.
 */
class CopyLineReader {
  readonly #rows: IndexRows;
  #pending: Buffer | undefined;

  constructor(rows: IndexRows) {
    this.#rows = rows;
  }

  readonly feed = (buf: Buffer, start: number, end: number): void => {
    if (this.#pending) {
      buf = Buffer.concat([this.#pending, buf.subarray(start, end)]);
      [start, end, this.#pending] = [0, buf.length, undefined];
    }
    const at = readCopyLines(buf, this.#rows, start, end);
    if (at < end) this.#pending = Buffer.from(buf.subarray(at, end));
  };

  /** Throws when the COPY ended inside a line. */
  finish(): void {
    if (this.#pending) throw new Error('the current-row index read a COPY that ended inside a row');
  }
}

/**
 * The current rows of one target, packed outside the JS heap (about 46 bytes a row): id, a hash of
 * the key, the start of the entry digest, and whether a fetched entry matched it. A resync of a
 * large list checks each fetched entry here and stages only the ones that are not current as they
 * are, so a million-entry list with 1% changed writes 1% to Postgres instead of all of it; the rows
 * no entry matched are the removed and the old sides of the modified.
 *
 * A list is fetched in much the order its rows were written (a first load writes them in fetch
 * order, and COPY reads them back in that order), so each entry is first compared with the row
 * after the last one matched: one sequential read. Only when that is not it does the lookup go to
 * the hash table, whose two random reads (a slot, a record) were most of the matching's time at a
 * million rows.
 */
export class CurrentRowIndex {
  readonly generation: number;
  readonly #rows: IndexRows;
  /** The row after the last one matched: where the next entry is looked for first. */
  #next = 0;

  private constructor(generation: number, expectedRows: number) {
    this.generation = generation;
    this.#rows = new IndexRows(expectedRows);
  }

  /** Rows read so far (all of them once read() has resolved). */
  get size(): number {
    return this.#rows.size;
  }

  /**
   * Reads the target's current rows with COPY (node-postgres only), together with the generation
   * they belong to, in one repeatable-read transaction so the two agree. The arrays are sized from
   * the last ok snapshot's entry count and grow past it: counting the rows first would read them
   * twice (0.5 to 0.8 s of Postgres time at a million). `filling` gets the index as soon as its
   * generation is known: it answers match() from the rows read so far while the rest comes.
   */
  static async read(conn: Connection, target: Target, filling?: (index: CurrentRowIndex) => void): Promise<CurrentRowIndex> {
    return conn.transaction(async (tx, opened) => {
      const { generation, entryCount } = currentIndexOpened(opened[0]);
      const { index, feed, finish } = CurrentRowIndex.filling(generation, entryCount);
      filling?.(index);
      await copyOut(tx, copyCurrentIndex(target), feed);
      finish();
      return index;
    }, openCurrentIndexRead(target));
  }

  /**
   * An empty index of `generation`, sized for `expectedRows`, and what fills it: `feed` takes the
   * bytes of the COPY's `id TAB key TAB digest` lines as they come (copyOut's handler), `finish`
   * says they have all come (and throws when the last line is incomplete).
   */
  static filling(generation: number, expectedRows: number): { index: CurrentRowIndex; feed: CopyDataHandler; finish: () => void } {
    const index = new CurrentRowIndex(generation, expectedRows);
    const reader = new CopyLineReader(index.#rows);
    return { index, feed: reader.feed, finish: () => reader.finish() };
  }

  /**
   * Whether this entry is current exactly as fetched, among the rows read so far; a match is
   * remembered, so it is not reported unseen.
   */
  match(entry: NormalizedEntry): boolean {
    const digest = entry.digest;
    if (digest.length < DIGEST_CHARS) return false;
    const w0 = digestWord(digest, 0);
    const w1 = digestWord(digest, 4);
    const w2 = digestWord(digest, 8);
    const w3 = digestWord(digest, 12);
    const { records, table } = this.#rows;
    let hash: number | undefined;
    const next = this.#next;
    if (next < this.#rows.size && digestIs(records, next, w0, w1, w2, w3)) {
      hash = keyHash(entry.entryKey) | 0;
      if (records[next * RECORD_WORDS] === hash) return this.#matched(next);
    }
    const { slots, mask } = table;
    let slot = slotOf(w0, mask);
    for (let value = slots[slot]!; value !== 0; slot = (slot + 1) & mask, value = slots[slot]!) {
      const row = value - 1;
      if (!digestIs(records, row, w0, w1, w2, w3)) continue;
      hash ??= keyHash(entry.entryKey) | 0;
      if (records[row * RECORD_WORDS] !== hash) continue;
      return this.#matched(row);
    }
    return false;
  }

  #matched(row: number): true {
    this.#rows.seen[row] = 1;
    this.#next = row + 1;
    return true;
  }

  /** The entries of `rows` that are not current as fetched (among the rows read so far): the ones to stage. */
  unmatched(rows: NormalizedEntry[]): NormalizedEntry[] {
    return rows.filter((row) => !this.match(row));
  }

  /** Ids of current rows no fetched entry matched. */
  unseenIds(): number[] {
    const { ids, seen, size } = this.#rows;
    const out: number[] = [];
    for (let row = 0; row < size; row++) if (seen[row] === 0) out.push(ids[row]!);
    return out;
  }

  /** What the apply needs: the generation this index reflects and the current rows left unmatched. */
  result(): IndexMatch {
    return { generation: this.generation, unseenIds: this.unseenIds() };
  }
}
