import { createHash, type Hash } from 'node:crypto';
import type { ListDefinition } from '../../catalog/catalog.ts';
import { packageVersion } from '../../util/package-version.ts';

/**
 * Bumped with any change to what the collector makes of the same served text (normalize.ts,
 * canonical.ts, content-hash.ts, entry-limits.ts, storable-text.ts): a digest seeded with another
 * number never matches, so a snapshot the old code summed up is never taken for what the new code
 * would make of it. The release is in the seed too, so a new release starts over in any case.
 * test/sync/served-digest.test.ts pins what the collector makes of a fixed answer, and fails on
 * such a change until this number and the pinned value are both moved.
 */
export const NORMALIZING = 1;

/**
 * The most served text a list is digested over (and held for, unnormalised: collect.ts): reference
 * lists are a few KB to a few hundred KB; past this one is large, and normalised as it comes.
 */
export const SERVED_DIGEST_MAX_CHARS = 4 * 2 ** 20;

/**
 * The sha-256 of a small list's entries as served (the text of each batch, in the order they came:
 * list-splitter.ts cuts them where the text itself says, so the same answers give the same batches),
 * seeded with this refsync's release and the list's key, code and description rules. The same
 * digest means the same entries, so the same content hash, count and fields as the snapshot that
 * recorded it: an unchanged sync that finds its last ok snapshot's digest skips normalising and
 * hashing every entry (collect.ts, sync-target.ts). The envelope around the entries (totals, `next`
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
