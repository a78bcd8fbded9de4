import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import type { Target } from '../catalog/targets.ts';
import type { Connection, Queryable } from '../db/database.ts';
import type { NormalizedEntry } from './normalize.ts';

/**
 * The current rows changed since the index was read (another sync applied this target in between),
 * so the rows the index let through unstaged can no longer be trusted to be current. The caller
 * fetches again without an index.
 */
export class StaleIndexError extends Error {
  readonly code = 'stale_index';
}

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

/** A table slot from the first four characters (24 bits) of a base64 digest, given as char codes. */
function slotOf(a: number, b: number, c: number, d: number, mask: number): number {
  const v = (code: number) => base64Value[code & 127]!;
  return ((v(a) << 18) | (v(b) << 12) | (v(c) << 6) | v(d)) & mask;
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

/** The id of the last ok snapshot that changed the target's rows: the state its current rows are in. */
export async function rowsGeneration(q: Queryable, target: Target): Promise<number> {
  const { rows } = await q.query<{ g: string | null }>(
    `select max(id) as g from refdata.snapshots
     where environment = $1 and list_key = $2 and variant = $3 and status = 'ok' and changed`,
    [target.source.environment, target.list.key, target.variant],
  );
  return Number(rows[0]?.g ?? 0);
}

/**
 * The current rows of one target, packed outside the JS heap (about 45 bytes a row): id, a hash of
 * the key, and the start of the entry digest. A resync of a large list checks each fetched entry
 * here and stages only the ones that are not current as they are, so a million-entry list with 1%
 * changed writes 1% to Postgres instead of all of it; the rows no entry matched are the removed
 * and the old sides of the modified.
 */
export class CurrentRowIndex {
  readonly generation: number;
  readonly size: number;
  readonly #ids: Float64Array;
  readonly #keyHashes: Uint32Array;
  readonly #digests: Uint8Array;
  readonly #seen: Uint8Array;
  readonly #slots: Int32Array;
  readonly #mask: number;

  private constructor(generation: number, ids: Float64Array, keyHashes: Uint32Array, digests: Uint8Array) {
    this.generation = generation;
    this.size = ids.length;
    this.#ids = ids;
    this.#keyHashes = keyHashes;
    this.#digests = digests;
    this.#seen = new Uint8Array(ids.length);
    let capacity = 16;
    while (capacity < ids.length * 2) capacity *= 2;
    this.#slots = new Int32Array(capacity).fill(-1);
    this.#mask = capacity - 1;
    for (let row = 0; row < ids.length; row++) {
      let slot = this.#slotOfStored(row);
      while (this.#slots[slot] !== -1) slot = (slot + 1) & this.#mask;
      this.#slots[slot] = row;
    }
  }

  /**
   * Reads the target's current rows with COPY (node-postgres only), together with the generation
   * they belong to, in one repeatable-read transaction so the two agree.
   */
  static async read(conn: Connection, target: Target): Promise<CurrentRowIndex> {
    return conn.transaction(async (tx) => {
      await tx.query('set transaction isolation level repeatable read, read only');
      const generation = await rowsGeneration(tx, target);
      const { rows } = await tx.query<{ n: number }>(
        `select count(*)::int as n from refdata.entries
         where environment = $1 and list_key = $2 and variant = $3 and valid_to is null`,
        [target.source.environment, target.list.key, target.variant],
      );
      const size = rows[0]!.n;
      const ids = new Float64Array(size);
      const keyHashes = new Uint32Array(size);
      const digests = new Uint8Array(size * DIGEST_CHARS);
      if (size > 0) {
        const lit = pg.escapeLiteral;
        const stream = copyTo(
          `copy (select id, entry_key, entry_hash from refdata.entries
                 where environment = ${lit(target.source.environment)} and list_key = ${lit(target.list.key)}
                   and variant = ${lit(target.variant)} and valid_to is null) to stdout`,
        );
        await tx.query(stream as unknown as string);
        let row = 0;
        let rest: Buffer | undefined;
        for await (const chunk of stream as AsyncIterable<Buffer>) {
          const buf = rest ? Buffer.concat([rest, chunk]) : chunk;
          let at = 0;
          for (let end = buf.indexOf(10, at); end !== -1; end = buf.indexOf(10, at)) {
            // The count and the copy read one snapshot, so they agree; the guard only keeps the arrays safe.
            if (row < size) {
              const tab1 = buf.indexOf(9, at);
              const tab2 = buf.indexOf(9, tab1 + 1);
              ids[row] = Number(buf.toString('latin1', at, tab1));
              keyHashes[row] = keyHash(uncopy(buf.toString('utf8', tab1 + 1, tab2)));
              buf.copy(digests, row * DIGEST_CHARS, tab2 + 1, Math.min(tab2 + 1 + DIGEST_CHARS, end));
            }
            row += 1;
            at = end + 1;
          }
          rest = at < buf.length ? buf.subarray(at) : undefined;
        }
        if (row !== size) throw new StaleIndexError(`the current rows changed while they were read (${row} read, ${size} counted)`);
      }
      return new CurrentRowIndex(generation, ids, keyHashes, digests);
    });
  }

  #slotOfStored(row: number): number {
    const d = this.#digests;
    const at = row * DIGEST_CHARS;
    return slotOf(d[at]!, d[at + 1]!, d[at + 2]!, d[at + 3]!, this.#mask);
  }

  /** Whether this entry is current exactly as fetched; a match is remembered, so it is not reported unseen. */
  match(entry: NormalizedEntry): boolean {
    const digest = entry.digest;
    if (digest.length < DIGEST_CHARS) return false;
    let slot = slotOf(digest.charCodeAt(0), digest.charCodeAt(1), digest.charCodeAt(2), digest.charCodeAt(3), this.#mask);
    let hash: number | undefined;
    for (let row = this.#slots[slot]!; row !== -1; slot = (slot + 1) & this.#mask, row = this.#slots[slot]!) {
      if (!this.#sameDigest(row, digest)) continue;
      hash ??= keyHash(entry.entryKey);
      if (this.#keyHashes[row] !== hash) continue;
      this.#seen[row] = 1;
      return true;
    }
    return false;
  }

  #sameDigest(row: number, digest: string): boolean {
    const d = this.#digests;
    const at = row * DIGEST_CHARS;
    for (let i = 0; i < DIGEST_CHARS; i++) if (d[at + i] !== digest.charCodeAt(i)) return false;
    return true;
  }

  /** The entries of `rows` that are not current as fetched: the ones to stage. */
  unmatched(rows: NormalizedEntry[]): NormalizedEntry[] {
    return rows.filter((row) => !this.match(row));
  }

  /** Ids of current rows no fetched entry matched. */
  unseenIds(): number[] {
    const out: number[] = [];
    for (let row = 0; row < this.size; row++) if (this.#seen[row] === 0) out.push(this.#ids[row]!);
    return out;
  }

  /** What the apply needs: the generation this index reflects and the current rows left unmatched. */
  result(): IndexMatch {
    return { generation: this.generation, unseenIds: this.unseenIds() };
  }
}
