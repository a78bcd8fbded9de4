import { createHash, type Hash } from 'node:crypto';
import { ListFailure } from '../../util/error-codes.ts';

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
