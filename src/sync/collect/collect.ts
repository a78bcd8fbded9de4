// What a fetched page becomes: every entry normalised (its strings made storable, its size within
// the limits, its JSON canonical), keyed, hashed into the list's content hash, and, for a small
// list, digested as served. The collector comes first; each step it takes has its section below.
import { hash, createHash, type Hash } from 'node:crypto';
import type { ListDefinition } from '../../catalog/catalog.ts';
import { type FieldValues, FieldTracker } from '../../columns/typed-columns.ts';
import type { ListBatch } from '../../upstream/list-batch.ts';
import type { IndexMatch } from '../load/large/current-index.ts';
import { ListFailure } from '../../util/error-codes.ts';
import { packageVersion } from '../../util/package-version.ts';

/** What one fetch of a list amounts to once every page has been read. */
export interface CollectedList {
  contentHash: string;
  entryCount: number;
  pages: number;
  fields: string[];
  /** Strings whose NUL or lone surrogates were replaced by U+FFFD, across the list. */
  replacedValues: number;
  /** Entries holding such a string. */
  replacedEntries: number;
  /** The first REPLACED_KEYS_LOGGED entries with a replacement, for the log line. */
  replacedKeys: string[];
  /** Per top-level field, the column type its values infer and their types (the views' typed columns follow them). */
  fieldValues: Map<string, FieldValues>;
  /** Rows not yet written to staging (all of them for small lists), less the ones `keep` dropped. */
  pending: NormalizedEntry[];
  /** The digest of the entries as served (ServedDigest, below), for a list small enough; else null. */
  servedDigest: string | null;
  /**
   * Set when the rows were checked against an index of the current rows: only the rows that are
   * not current as fetched were staged, and these are the current rows nothing matched.
   */
  index?: IndexMatch;
}

export interface CollectorOptions {
  /** Rows kept in memory before they are handed to `spill` (large lists stream through). */
  spillThreshold: number;
  /** Rows per spill once the list has spilled once (default spillThreshold): see src/sync/sync-target.ts#SyncTuning. */
  spillEvery?: number;
  spill: (rows: NormalizedEntry[]) => Promise<void>;
  /**
   * The row to keep for the database, or undefined to drop it (default: every row, as it is). A row
   * already current as fetched is hashed and counted, then dropped at once: kept until a spill, a
   * million of them would outlive the young generation and cost the collector's GC most of its time.
   * The sync keeps copies (keptEntry), of a small list's rows too, so that the rows normalised all die young.
   */
  keep?: (row: NormalizedEntry) => NormalizedEntry | undefined;
  /**
   * The rows still to keep of those kept so far, asked before they spill: `keep` may say more of a
   * row now than when it came (an index still being read). Rows it drops need no spill.
   */
  recheck?: (rows: NormalizedEntry[]) => NormalizedEntry[];
  /** Rows kept before the first spill, asked at each batch (default spillThreshold). */
  firstSpillAt?: () => number;
  /** How the content hash keeps lines for a key out of order (ContentHasher, below); all of them by default. */
  hash?: HasherOptions;
  /**
   * A list of at most this much is digested as served (ServedDigest, below), and with `keepRaw` its
   * batches are kept raw, as they came, until the fetch ends (ListCollector#servedDigest says why). Past
   * either bound the list is not small: the raw batches are normalised then, and it has no digest.
   * Keep `entries` below the spill threshold and the index's start: a list kept raw never spills.
   */
  served?: { entries: number; chars: number; keepRaw: boolean };
}

/** The whole list summed up without its rows, from the snapshot whose served digest it has. */
export type SummedUp = Pick<CollectedList, 'contentHash' | 'entryCount' | 'fields'>;

/** Entry keys named in the log line about replacements: enough to find them, bounded for a million. */
export const REPLACED_KEYS_LOGGED = 20;

/**
 * Reads a list page by page: normalises each entry, tracks its fields, and feeds its key and digest
 * to the canonical hash; the rows themselves are buffered up to a threshold and then spilled to
 * staging, so a million-entry list is never in memory whole. A small list may be kept raw, as it came, until
 * its served digest is known (CollectorOptions.served).
 */
export class ListCollector {
  readonly #list: ListDefinition;
  readonly #options: CollectorOptions;
  readonly #fields = new FieldTracker();
  readonly #hasher: ContentHasher;
  #received = 0;
  /** Entries normalised so far: the index an entry is named by in errors. */
  #normalized = 0;
  /** The served text's digest, while the list is small (CollectorOptions.served); null once it is not. */
  #digest: ServedDigest | null;
  /** The digest once finished (servedDigest). */
  #digestHex: string | null | undefined;
  /** Batches taken in but not normalised yet (CollectorOptions.served.keepRaw). */
  #raw: unknown[][] = [];
  #buffer: NormalizedEntry[] = [];
  #spilled = false;
  /** Rows per spill set after the first by the loader it chose (spillEach). */
  #spillEach: number | undefined;
  #pages = 0;
  #replacedValues = 0;
  #replacedEntries = 0;
  readonly #replacedKeys: string[] = [];

  constructor(list: ListDefinition, options: CollectorOptions) {
    this.#list = list;
    this.#options = options;
    this.#hasher = new ContentHasher(list.key, options.hash);
    this.#digest = options.served ? new ServedDigest(list) : null;
  }

  /** From the next spill on, spills every `rows` rows kept: the loader's choice (Loader#spillEach). */
  spillEach(rows: number): void {
    this.#spillEach = rows;
  }

  /** Entries read so far, duplicates included. */
  get received(): number {
    return this.#received;
  }

  /** Takes the next batch: a page, or the continuation of a large one (which counts no page). */
  async addBatch(batch: ListBatch): Promise<void> {
    const { entries } = batch;
    if (!batch.continuesPage) this.#pages += 1;
    this.#received += entries.length;
    if (this.#digest) this.#digestServed(batch.servedText);
    if (this.#digest && this.#options.served!.keepRaw) {
      this.#raw.push(entries);
      return;
    }
    await this.#normaliseRaw();
    await this.#normalize(entries);
  }

  /** Adds a batch's served text to the digest while the list stays small; past that, or without it, the list has none. */
  #digestServed(text: string | null): void {
    const digest = this.#digest!;
    const bounds = this.#options.served!;
    if (text === null || this.#received > bounds.entries || digest.chars + text.length > bounds.chars) this.#digest = null;
    else digest.add(text);
  }

  /**
   * The digest of every entry as served, once the fetch has ended, for a list that stayed small; null
   * for a larger one. With `served.keepRaw` nothing is normalised yet: the caller compares it with the
   * last ok snapshot's first (rawDigest), and sums the list up from that snapshot (finishAsBefore)
   * when it is the same, which is the unchanged sync's usual case, or normalises it all (finish).
   */
  servedDigest(): string | null {
    if (this.#digestHex === undefined) this.#digestHex = this.#digest?.hex() ?? null;
    return this.#digestHex;
  }

  /**
   * The served digest while no entry has been normalised (every batch kept raw): only then does
   * summing the list up from the snapshot it matches (finishAsBefore) save anything.
   */
  rawDigest(): string | null {
    return this.#normalized === 0 ? this.servedDigest() : null;
  }

  /** Normalises the raw batches, in the order they came (the list is not small, or not as it was). */
  async #normaliseRaw(): Promise<void> {
    const raw = this.#raw;
    this.#raw = [];
    for (const entries of raw) await this.#normalize(entries);
  }

  async #normalize(entries: readonly unknown[]): Promise<void> {
    const keep = this.#options.keep;
    for (const raw of entries) {
      const row = normalizeEntry(this.#list, raw, this.#normalized, this.#fields);
      this.#normalized += 1;
      if (row.replaced > 0) this.#noteReplaced(row);
      this.#hasher.add(row.entryKey, row.digest);
      const kept = keep ? keep(row) : row;
      if (kept) this.#buffer.push(kept);
    }
    const threshold = this.#spilled
      ? (this.#spillEach ?? this.#options.spillEvery ?? this.#options.spillThreshold)
      : (this.#options.firstSpillAt?.() ?? this.#options.spillThreshold);
    if (this.#buffer.length >= threshold && this.#options.recheck) this.#buffer = this.#options.recheck(this.#buffer);
    if (this.#buffer.length >= threshold) {
      const rows = this.#buffer;
      this.#buffer = [];
      this.#spilled = true;
      await this.#options.spill(rows);
    }
  }

  #noteReplaced(row: NormalizedEntry): void {
    this.#replacedValues += row.replaced;
    this.#replacedEntries += 1;
    if (this.#replacedKeys.length < REPLACED_KEYS_LOGGED) this.#replacedKeys.push(row.entryKey);
  }

  /**
   * The fetch as it was last time: its served digest is `before`'s, so normalising would make the
   * same content hash, count and fields. Its rows are not made: only an unchanged sync may use it.
   * The batches stay raw: should the caller not take it as unchanged after all, finish() still
   * normalises every one.
   */
  finishAsBefore(before: SummedUp): CollectedList {
    return {
      ...before,
      pages: this.#pages,
      replacedValues: 0,
      replacedEntries: 0,
      replacedKeys: [],
      fieldValues: new Map(),
      pending: [],
      servedDigest: this.servedDigest(),
    };
  }

  /** The fetch as a whole, once every page has been added; throws on two entries under one key. */
  async finish(): Promise<CollectedList> {
    const servedDigest = this.servedDigest();
    await this.#normaliseRaw();
    const { contentHash, entryCount } = this.#hasher.finish();
    return {
      contentHash,
      entryCount,
      pages: this.#pages,
      fields: this.#fields.signature(),
      replacedValues: this.#replacedValues,
      replacedEntries: this.#replacedEntries,
      replacedKeys: this.#replacedKeys,
      fieldValues: this.#fields.fieldValues(),
      pending: this.#buffer,
      servedDigest,
    };
  }
}

// ── Canonical JSON ──

/** An object shape seen before: its keys as Object.keys gave them, sorted, and JSON-quoted. */
interface Shape {
  keys: string[];
  sorted: string[];
  quoted: string[];
  /**
   * Whether a plain object with the sorted keys inserted in order keeps that order. Integer-like
   * keys do not (JavaScript lists them first, in numeric order), and `__proto__` cannot be set
   * as an own property by assignment.
   */
  rebuildable: boolean;
}

// Entries of one list nearly always share a few shapes, so sorting and quoting their keys once per
// shape, not once per entry, halves the cost of a canonical form (a million entries per P3 sync).
const SHAPES_KEPT = 16;
const shapes: Shape[] = [];
const integerLike = /^\d+$/;

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function shapeOf(keys: string[]): Shape {
  for (const shape of shapes) if (sameKeys(shape.keys, keys)) return shape;
  const sorted = [...keys].sort();
  const rebuildable = !keys.some((k) => k === '__proto__' || integerLike.test(k));
  const shape = { keys, sorted, quoted: sorted.map((k) => JSON.stringify(k)), rebuildable };
  if (shapes.length >= SHAPES_KEPT) shapes.pop();
  shapes.unshift(shape);
  return shape;
}

/** Returned by sortedCopy for a value JSON.stringify would not serialise as the definition does. */
const NOT_COPYABLE = Symbol('not copyable');

/** Checked before each step down, so a hostile nesting fails its list instead of the stack. */
function tooDeep(): EntryLimitError {
  return new EntryLimitError(`nests deeper than ${MAX_DEPTH} levels (limit ${MAX_DEPTH})`);
}

/**
 * The value with every object rebuilt with its keys in sorted order, for JSON.stringify to
 * serialise in one native pass: a flat string, about a third cheaper to build and to hash than
 * one concatenated piece by piece. Gives up on anything where JSON.stringify and the definition
 * differ (undefined members, toJSON, class instances, keys an object would reorder). A number
 * kept as raw JSON (every digit as served) is kept as it is: JSON.stringify writes it verbatim.
 */
function sortedCopy(value: unknown, depth: number): unknown {
  if (value === undefined) return NOT_COPYABLE;
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_DEPTH) throw tooDeep();
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const item = sortedCopy(value[i], depth + 1);
      if (item === NOT_COPYABLE) return NOT_COPYABLE;
      out[i] = item;
    }
    return out;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return NOT_COPYABLE;
  if (proto === null && JSON.isRawJSON(value)) return value;
  const { sorted, rebuildable } = shapeOf(Object.keys(value));
  if (!rebuildable) return NOT_COPYABLE;
  const out: Record<string, unknown> = {};
  for (const key of sorted) {
    const member = sortedCopy((value as Record<string, unknown>)[key], depth + 1);
    if (member === NOT_COPYABLE) return NOT_COPYABLE;
    out[key] = member;
  }
  return out;
}

/** The definition, piece by piece: for the values sortedCopy gives up on. */
function concatenated(value: unknown, depth: number): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (JSON.isRawJSON(value)) return value.rawJSON;
  if (depth > MAX_DEPTH) throw tooDeep();
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i ? ',' : '') + concatenated(value[i], depth + 1);
    return `${out}]`;
  }
  const { sorted, quoted } = shapeOf(Object.keys(value));
  let out = '{';
  for (let i = 0; i < sorted.length; i++) {
    out += `${i ? ',' : ''}${quoted[i]}:${concatenated((value as Record<string, unknown>)[sorted[i]!], depth + 1)}`;
  }
  return `${out}}`;
}

/**
 * JSON with object keys sorted at every depth, so that two entries equal in content serialise to the
 * same bytes whatever key order the service used. Throws EntryLimitError past MAX_DEPTH levels.
 */
export function canonicalJson(value: unknown): string {
  const copy = sortedCopy(value, 1);
  return copy === NOT_COPYABLE ? concatenated(value, 1) : JSON.stringify(copy);
}

/** sha-256 of the canonical entry, base64: the entry's identity of content. */
export function entryDigest(canonical: string): string {
  // The one-shot hash skips building a Hash object per entry (about half the cost of createHash).
  return hash('sha256', canonical, 'base64');
}

// ── The content hash ──

export class DuplicateKeyError extends ListFailure {
  readonly code = 'duplicate_key';
}

/**
 * A key out of order after the lines kept for sorting were let go (HasherOptions.keepAtMost): not
 * a failure of the list, which is fetched again and sorted from its first entry (sync-target.ts).
 */
export class KeysOutOfOrder extends Error {
  constructor(listKey: string, entries: number) {
    super(`${listKey}: a key out of order after ${entries} entries in order; fetching it again to sort every key`);
    this.name = 'KeysOutOfOrder';
  }
}

export interface HasherOptions {
  /**
   * Entries in key order whose lines are kept in case a later key breaks the order (default: all).
   * Past it they are let go (about 50 bytes an entry: 50 MB at a million), and a key out of order
   * throws KeysOutOfOrder instead of moving them into a PairArena.
   */
  keepAtMost?: number;
  /** Sort every key from the first (the plain definition): for a list known to come out of order. */
  sorted?: boolean;
}

/** Hash input is handed to OpenSSL in chunks of about this many characters, not once per entry. */
const HASH_CHUNK_CHARS = 64 * 1024;
const notLatin1 = /[^\u0000-\u00ff]/;
const lineBreaking = /[\u0000\n]/;

/** Short strings are copied in JS: a native Buffer.write per key and per digest cost more than the copy. */
function writeLatin1(buf: Buffer, at: number, text: string): number {
  for (let i = 0; i < text.length; i++) buf[at + i] = text.charCodeAt(i);
  return at + text.length;
}

/**
 * The arena grows in blocks, never copied: the first is small (most lists are a few hundred
 * entries, and a worker collects thousands of them), each next one twice the last, up to 4 MiB.
 */
const FIRST_BLOCK_BYTES = 16 * 1024;
const MAX_BLOCK_BYTES = 4 * 2 ** 20;

/**
 * The `key NUL digest` pair of every entry, packed in buffers outside the JS heap: what the sort at
 * the end needs when the entries did not come in key order. About 60 bytes per entry, where a
 * string per entry cost several times that, most of it the collector's share of GC.
 */
class PairArena {
  /** Filled blocks with the bytes used in each; the current block is the last, its end is #used. */
  readonly #blocks: Array<{ buf: Buffer; end: number }> = [];
  #block = Buffer.alloc(0);
  #used = 0;
  #count = 0;

  add(key: string, digest: string): void {
    const wide = notLatin1.test(key);
    // Keys are kept in a lossless encoding (latin1 when it fits, else UTF-16) and the digest as
    // the base64 text it is, so the lines rebuilt at the end are the very strings hashed.
    const keyBytes = wide ? key.length * 2 : key.length;
    const bytes = 6 + keyBytes + digest.length;
    if (this.#used + bytes > this.#block.length) {
      const last = this.#blocks.at(-1);
      if (last) last.end = this.#used;
      const size = Math.min(MAX_BLOCK_BYTES, this.#block.length * 2 || FIRST_BLOCK_BYTES);
      this.#block = Buffer.allocUnsafe(Math.max(size, bytes));
      this.#blocks.push({ buf: this.#block, end: 0 });
      this.#used = 0;
    }
    const buf = this.#block;
    let at = this.#used;
    buf.writeUInt32LE(keyBytes, at);
    buf[at + 4] = wide ? 1 : 0;
    buf[at + 5] = digest.length;
    at += 6;
    if (wide) at += buf.write(key, at, keyBytes, 'utf16le');
    else at = writeLatin1(buf, at, key);
    this.#used = writeLatin1(buf, at, digest);
    this.#count += 1;
  }

  /** Every pair as its `key NUL digest` line, in the order added. */
  lines(): string[] {
    const out = new Array<string>(this.#count);
    let i = 0;
    for (const { buf, end: filled } of this.#blocks) {
      const end = buf === this.#block ? this.#used : filled;
      for (let at = 0; at < end; i++) {
        const keyBytes = buf.readUInt32LE(at);
        const wide = buf[at + 4] === 1;
        const digestBytes = buf[at + 5]!;
        at += 6;
        const key = buf.toString(wide ? 'utf16le' : 'latin1', at, at + keyBytes);
        at += keyBytes;
        out[i] = `${key}\u0000${buf.toString('latin1', at, at + digestBytes)}`;
        at += digestBytes;
      }
    }
    return out;
  }
}

/** A chunk of lines out of the JS heap, in a lossless encoding: latin1 when it fits, else UTF-16. */
interface KeptChunk {
  bytes: Buffer;
  wide: boolean;
}

function keptChunk(text: string): KeptChunk {
  const wide = notLatin1.test(text);
  return { bytes: Buffer.from(text, wide ? 'utf16le' : 'latin1'), wide };
}

function chunkText(chunk: KeptChunk): string {
  return chunk.bytes.toString(chunk.wide ? 'utf16le' : 'latin1');
}

/**
 * The canonical hash of a list: sha-256 over `key NUL digest` lines sorted by key, identical
 * duplicates collapsed; two different entries under one key fail the list, naming the key.
 *
 * Services nearly always serve a list in key order, so while the keys arrive sorted the lines are
 * hashed as they come, in chunks, and the chunks are kept (about 45 bytes per entry, a few strings
 * in all) up to HasherOptions.keepAtMost entries. A key out of order before that moves every line
 * so far into a PairArena and switches to the plain definition: sort every pair at the end. Both
 * give the same bytes. After it, the kept lines are gone and KeysOutOfOrder is thrown instead.
 */
export class ContentHasher {
  readonly #listKey: string;
  /** The streaming hash while keys ascend; unused once one did not (#arena set). */
  readonly #hash: Hash = createHash('sha256');
  /**
   * Lines hashed so far, in chunks copied out of the JS heap: kept as strings, 45 MB at a million
   * entries would sit in the old generation and let V8 grow the heap by about twice that.
   */
  #kept: KeptChunk[] = [];
  #chunk = '';
  #arena: PairArena | undefined;
  #lastKey: string | undefined;
  #lastDigest: string | undefined;
  #count = 0;
  readonly #keepAtMost: number;
  /** Whether the kept lines were let go: a key out of order can then no longer be sorted in. */
  #letGo = false;

  constructor(listKey: string, options: HasherOptions = {}) {
    this.#listKey = listKey;
    this.#keepAtMost = options.keepAtMost ?? Number.POSITIVE_INFINITY;
    if (options.sorted) this.#arena = new PairArena();
  }

  add(key: string, digest: string): void {
    if (this.#arena) {
      this.#arena.add(key, digest);
      return;
    }
    const lastKey = this.#lastKey;
    if (lastKey !== undefined && key <= lastKey) {
      if (key !== lastKey) {
        this.#unordered(key, digest);
        return;
      }
      if (digest === this.#lastDigest) return;
      throw this.#duplicate(key);
    }
    // Lines sort as their keys do unless a key holds NUL, the separator, and the kept chunks are
    // split on newlines: a key with either is sorted the plain way.
    if (lineBreaking.test(key)) {
      this.#unordered(key, digest);
      return;
    }
    this.#chunk += `${key}\u0000${digest}\n`;
    if (this.#chunk.length >= HASH_CHUNK_CHARS) {
      this.#hash.update(this.#chunk);
      if (this.#count < this.#keepAtMost) this.#kept.push(keptChunk(this.#chunk));
      else if (!this.#letGo) {
        this.#kept = [];
        this.#letGo = true;
      }
      this.#chunk = '';
    }
    this.#lastKey = key;
    this.#lastDigest = digest;
    this.#count += 1;
  }

  #unordered(key: string, digest: string): void {
    if (this.#letGo) throw new KeysOutOfOrder(this.#listKey, this.#count);
    const arena = new PairArena();
    for (const chunk of [...this.#kept.map(chunkText), this.#chunk]) {
      let at = 0;
      for (let end = chunk.indexOf('\n'); end !== -1; at = end + 1, end = chunk.indexOf('\n', at)) {
        const nul = chunk.indexOf('\u0000', at);
        arena.add(chunk.slice(at, nul), chunk.slice(nul + 1, end));
      }
    }
    arena.add(key, digest);
    this.#arena = arena;
    this.#kept = [];
    this.#chunk = '';
  }

  /** The hex content hash and the number of distinct entries. */
  finish(): { contentHash: string; entryCount: number } {
    if (!this.#arena) return { contentHash: this.#hash.update(this.#chunk).digest('hex'), entryCount: this.#count };
    return this.#sorted(this.#arena);
  }

  #sorted(arena: PairArena): { contentHash: string; entryCount: number } {
    const lines = arena.lines().sort();
    const hash = createHash('sha256');
    let chunk = '';
    let previous: string | undefined;
    let previousKey: string | undefined;
    let count = 0;
    for (const line of lines) {
      if (line === previous) continue;
      const key = line.slice(0, line.indexOf('\u0000'));
      if (key === previousKey) throw this.#duplicate(key);
      chunk += `${line}\n`;
      if (chunk.length >= HASH_CHUNK_CHARS) {
        hash.update(chunk);
        chunk = '';
      }
      previous = line;
      previousKey = key;
      count += 1;
    }
    return { contentHash: hash.update(chunk).digest('hex'), entryCount: count };
  }

  #duplicate(key: string): DuplicateKeyError {
    return new DuplicateKeyError(`${this.#listKey}: the key '${key}' appears twice with different contents`);
  }
}

// ── What an entry may hold ──
// What one entry may hold before its list is refused. Real reference lists stay far below every
// limit; the limits keep a hostile or broken answer from costing the process its stack or memory,
// and from reaching Postgres with what it would refuse mid-transaction. docs/reliability.md lists them.

/** Objects and arrays nested inside an entry, the entry itself being level 1. */
export const MAX_DEPTH = 64;
/** One string value, in characters (UTF-16 code units). A 1 MB description is accepted. */
export const MAX_STRING_CHARS = 4 * 2 ** 20;
/** One object key, in characters: a field name, not a document. A 10 KB key is refused. */
export const MAX_KEY_CHARS = 1024;
/**
 * The entry key in UTF-8 bytes: it is indexed with environment, list and variant, and a btree row
 * holds at most about 2,700 bytes (SQLSTATE 54000 past that).
 */
export const MAX_ENTRY_KEY_BYTES = 1024;

/** An entry beyond one of the limits: a failure of its list, recorded and never retried. */
export class EntryLimitError extends ListFailure {
  readonly code = 'limit';
}

/**
 * Throws when a key or string of the value is longer than its limit. Only called for entries whose
 * canonical text is longer than the key limit, so the common small entry is never walked; the
 * walk itself is bounded by the depth limit, checked before it.
 */
export function checkSizes(value: unknown): void {
  if (typeof value === 'string') {
    if (value.length > MAX_STRING_CHARS) {
      throw new EntryLimitError(`holds a string of ${value.length} characters (limit ${MAX_STRING_CHARS})`);
    }
    return;
  }
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    for (const item of value) checkSizes(item);
    return;
  }
  for (const key in value) {
    if (key.length > MAX_KEY_CHARS) {
      throw new EntryLimitError(`holds an object key of ${key.length} characters (limit ${MAX_KEY_CHARS})`);
    }
    checkSizes((value as Record<string, unknown>)[key]);
  }
}

/** Throws when the entry key is too long for the index that keeps it unique. */
export function checkEntryKey(key: string): void {
  // UTF-8 takes at most 3 bytes per UTF-16 code unit: most keys need no count at all.
  if (key.length * 3 <= MAX_ENTRY_KEY_BYTES) return;
  const bytes = Buffer.byteLength(key);
  if (bytes > MAX_ENTRY_KEY_BYTES) {
    throw new EntryLimitError(`has an entry key of ${bytes} bytes (limit ${MAX_ENTRY_KEY_BYTES}, the most a Postgres index row holds with room to spare)`);
  }
}

// ── One entry, normalised ──

/** One entry ready to store: identity, the two columns data teams read most, and the entry as served. */
export interface NormalizedEntry {
  entryKey: string;
  code: string | null;
  description: string | null;
  /** The entry as served (JSON text; unknown fields kept). */
  payload: string;
  digest: string;
  /** Strings (values and keys) whose NUL or lone surrogates were replaced by U+FFFD; 0 nearly always. */
  replaced: number;
}

/**
 * The row as kept past its batch: a copy, made apart from the rows normalizeEntry makes. V8
 * allocates an object literal's objects in the old generation from the start once most of them have
 * outlived a young-generation collection (allocation-site pretenuring), and does not go back. Were
 * the kept rows the objects normalizeEntry made, a few thousand rows kept for a while (a small list,
 * a first load, a resync's rows before its index has read their match) would move every later entry
 * to the old generation, where a dropped row keeps its strings alive through each young collection
 * until a full one: a 1% resync of a million entries then ran about 30 full collections instead of
 * 7, and took 1.35x-1.45x its collect floor instead of 1.1x-1.25x. Copied, the rows normalised all
 * die young, and only the copies live on.
 */
export function keptEntry(row: NormalizedEntry): NormalizedEntry {
  return { ...row };
}

export class EntryShapeError extends ListFailure {
  readonly code = 'protocol';
}

function scalarText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  // A number kept with every digit (see src/upstream/list-body.ts#parseKeepingNumbers) reads as served.
  if (value !== null && typeof value === 'object' && JSON.isRawJSON(value)) return value.rawJSON;
  return null;
}

function firstText(entry: Record<string, unknown>, fields: readonly string[]): string | null {
  for (const field of fields) {
    const text = scalarText(entry[field]);
    if (text !== null && text !== '') return text;
  }
  return null;
}

/**
 * The entry key per the catalog rule: the key fields joined with '|'. A missing part of a composite
 * key counts as '' (NMFC items without a sub code); an entry with none of its key fields falls back
 * to the code rule, and failing that is a shape error naming the list.
 */
function entryKey(list: ListDefinition, entry: Record<string, unknown>, index: number): string {
  // Built without intermediate arrays: it runs once per entry, a million times for a large list.
  const fields = list.keyFields;
  let key = '';
  let found = false;
  for (let i = 0; i < fields.length; i++) {
    const part = scalarText(entry[fields[i]!]);
    if (part !== null && part !== '') found = true;
    key = i === 0 ? (part ?? '') : `${key}|${part ?? ''}`;
  }
  if (found) return key;
  const fallback = firstText(entry, list.codeFields);
  if (fallback !== null) return fallback;
  throw new EntryShapeError(`${list.key}: entry ${index} has none of the key fields ${list.keyFields.join(', ')} nor a code (${list.codeFields.join(', ')})`);
}

/** Names an entry in an error: its key when it has a readable one, else its position. */
function entryName(list: ListDefinition, entry: Record<string, unknown>, index: number): string {
  let key: string;
  try {
    key = storableText(entryKey(list, entry, index));
  } catch {
    return `entry ${index}`;
  }
  return key.length > 80 ? `entry ${index} (key '${key.slice(0, 80)}…')` : `entry '${key}'`;
}

/**
 * The entry as it will be stored. Limits are checked first (depth inside canonicalJson, before it
 * steps down; sizes only for entries long enough to break one); NUL and lone surrogates are
 * replaced only when the canonical text shows one, so the common entry costs one indexOf more.
 * `fields`, when given, observes the entry as stored.
 */
export function normalizeEntry(list: ListDefinition, raw: unknown, index: number, fields?: FieldTracker): NormalizedEntry {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new EntryShapeError(`${list.key}: entry ${index} is ${Array.isArray(raw) ? 'an array' : typeof raw}, not an object`);
  }
  let entry = raw as Record<string, unknown>;
  let key: string;
  let canonical: string;
  let replaced = 0;
  try {
    canonical = canonicalJson(entry);
    if (canonical.length > MAX_KEY_CHARS) checkSizes(entry);
    if (mayHoldUnstorable(canonical)) {
      const counted = { count: 0 };
      entry = storableValue(entry, counted) as Record<string, unknown>;
      replaced = counted.count;
      if (replaced > 0) canonical = canonicalJson(entry);
    }
    key = entryKey(list, entry, index);
    checkEntryKey(key);
  } catch (err) {
    if (!(err instanceof EntryLimitError)) throw err;
    throw new EntryLimitError(`${list.key}: ${entryName(list, entry, index)} ${err.message}`);
  }
  fields?.observe(entry);
  return {
    entryKey: key,
    code: firstText(entry, list.codeFields),
    description: firstText(entry, list.descriptionFields),
    payload: canonical,
    digest: entryDigest(canonical),
    replaced,
  };
}

// ── The served digest ──

/**
 * Bumped with any change to what the collector makes of the same served text (the sections of
 * this file above: normalising, canonical JSON, the content hash, the entry limits, storable text): a digest seeded with another
 * number never matches, so a snapshot the old code summed up is never taken for what the new code
 * would make of it. The release is in the seed too, so a new release starts over in any case.
 * test/sync/served-digest.test.ts pins what the collector makes of a fixed answer, and fails on
 * such a change until this number and the pinned value are both moved.
 */
export const NORMALIZING = 1;

/**
 * The most served text a list is digested over (and held for, unnormalised, by the collector above): reference
 * lists are a few KB to a few hundred KB; past this one is large, and normalised as it comes.
 */
export const SERVED_DIGEST_MAX_CHARS = 4 * 2 ** 20;

/**
 * The sha-256 of a small list's entries as served (the text of each batch, in the order they came:
 * src/upstream/list-body.ts#ListSplitter cuts them where the text itself says, so the same answers give the same batches),
 * seeded with this refsync's release and the list's key, code and description rules. The same
 * digest means the same entries, so the same content hash, count and fields as the snapshot that
 * recorded it: an unchanged sync that finds its last ok snapshot's digest skips normalising and
 * hashing every entry (the collector above, src/sync/sync-target.ts). The envelope around the entries (totals, `next`
 * links, which may carry a cursor) is left out: the client checks it whatever the digest.
 */
export class ServedDigest {
  readonly #hash: Hash;
  #chars = 0;

  constructor(list: ListDefinition) {
    const seed = [packageVersion, NORMALIZING, list.key, list.keyFields, list.codeFields, list.descriptionFields];
    // The seed is one JSON value and each batch another: their concatenation reads back one way only.
    this.#hash = createHash('sha256').update(JSON.stringify(seed));
  }

  /** Characters of served text digested so far. */
  get chars(): number {
    return this.#chars;
  }

  add(text: string): void {
    this.#hash.update(text);
    this.#chars += text.length;
  }

  /** The digest in hex; the digest is finished by it, so call it once. */
  hex(): string {
    return this.#hash.digest('hex');
  }
}

// ── Text Postgres can store ──
// Postgres text and jsonb cannot hold U+0000, and jsonb refuses a lone surrogate. Such code units
// are replaced by U+FFFD (the replacement character) in every string of an entry, values and keys
// at any depth, before anything else sees the entry: payload, code, description, entry key,
// digests and change rows then agree, and an unchanged answer hashes the same on every sync.

export const REPLACEMENT = '\ufffd';

/** NUL or any surrogate: the cheap test; a surrogate in a well-formed pair passes the exact one. */
const suspect = /[\u0000\ud800-\udfff]/;
/**
 * The same in canonical JSON text, which escapes NUL and lone surrogates (never paired ones):
 * `\u0000` and `\ud800`-`\udfff`. A literal backslash-u in a string may match too; that only costs
 * the exact walk.
 */
const escaped = /\\u(?:0000|d[89a-f])/i;

/** Whether canonical JSON text may hold a code unit Postgres cannot store. */
export function mayHoldUnstorable(canonical: string): boolean {
  return canonical.includes('\\u') && escaped.test(canonical);
}

/** The text with NUL and lone surrogates replaced by U+FFFD (the same string when there are none). */
export function storableText(text: string): string {
  if (!suspect.test(text)) return text;
  const fixed = text.toWellFormed();
  return fixed.includes('\u0000') ? fixed.replaceAll('\u0000', REPLACEMENT) : fixed;
}

/** Counts the strings (values and keys) a storable copy changed. */
export interface Replacements {
  count: number;
}

/**
 * A copy of the value with every string storable, counting the strings changed. Called only when
 * the canonical text showed a suspect escape, after the depth limit was checked.
 *
 * Two names of one object can become one once stored (`x\u0000` and `x\ufffd`, a lone surrogate
 * and U+FFFD): the name that sorts first (by UTF-16 code units) keeps its value and the other is
 * dropped (counted as a replacement), so the stored entry depends on what was served, never on the
 * order the service sent its names in.
 */
export function storableValue(value: unknown, replaced: Replacements): unknown {
  if (typeof value === 'string') {
    const text = storableText(value);
    if (text !== value) replaced.count += 1;
    return text;
  }
  if (value === null || typeof value !== 'object' || JSON.isRawJSON(value)) return value;
  if (Array.isArray(value)) return value.map((item) => storableValue(item, replaced));
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const storableKey = storableText(key);
    if (storableKey !== key) replaced.count += 1;
    if (Object.hasOwn(out, storableKey)) continue;
    out[storableKey] = storableValue((value as Record<string, unknown>)[key], replaced);
  }
  return out;
}
