// A list answer of a million entries is ~100 MB of JSON. Held whole as text and then as one parsed
// array it costs several times that; split at the list's own commas as the bytes arrive, it is
// parsed a few hundred KB at a time and each batch can be handed on (and dropped) before the next.

/**
 * Where a batch ends: at a comma after at least `entries` elements (the page size, so a page of the
 * size asked for is never cut) and `minBytes`, or after `maxBytes` whatever the count. No element,
 * and no text outside the streamed array, may be longer than `maxEntryBytes`: that, not the size of
 * the body, is what the splitter ever holds at once.
 */
export interface BatchLimits {
  entries: number;
  minBytes: number;
  maxBytes: number;
  /** No limit when absent. */
  maxEntryBytes?: number;
}

/** An element, or the text around the streamed array, longer than maxEntryBytes. */
export class EntryTooLongError extends Error {
  readonly what: 'entry' | 'envelope';

  constructor(what: 'entry' | 'envelope') {
    super(what === 'entry' ? 'an entry is longer than the limit' : 'the text besides the entries is longer than the limit');
    this.what = what;
  }
}

/**
 * Least bytes of a batch of a bare array of the whole list. In P3 (a million entries of ~100 bytes)
 * batches of 128 KB peaked at 268-317 MiB against 291-372 MiB for batches of 1,000 entries
 * (one run each on a shared VM; what V8 keeps between collections varies from run to run).
 */
export const MIN_BATCH_BYTES = 128 * 1024;
/** Bounds a batch of very large entries. */
export const MAX_BATCH_BYTES = 8 * 2 ** 20;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
/** A key spelled with escapes (`"res\u0075lts"`) still fits; longer keys are never `results`. */
const MAX_KEY_BYTES = 64;

function isSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/** What is left once the body has ended, beside the batches already handed out. */
export type SplitEnd =
  | { shape: 'array' }
  /** The envelope's text with its `results` array emptied (`"results":[]`), to be parsed for the other members. */
  | { shape: 'envelope'; envelope: string }
  /** Neither an array nor an object: the whole text, for the ordinary parse and its messages. */
  | { shape: 'other'; text: string };

/**
 * Splits the bytes of a bare JSON array, or of the `results` array of an envelope object, into
 * batches of whole elements, each returned as the text of a JSON array (`[e1,e2,...]`). Tracks only
 * strings, escapes and nesting depth: the batches themselves go to JSON.parse, which checks the rest.
 * Splits only at ASCII commas outside strings, so a multi-byte character is never cut.
 */
export class ListSplitter {
  readonly #limits: Required<BatchLimits>;
  /** Elements ended by a comma in the batch being gathered. */
  #batchEntries = 0;
  #started = false;
  #shape: 'array' | 'envelope' | 'other' = 'other';
  #ended = false;
  #depth = 0;
  #inString = false;
  #escaped = false;
  /** Depth inside the streamed array, or 0 when not inside it. */
  #streamDepth = 0;
  #streamed = false;
  /** Element bytes of the batch being gathered, from earlier chunks. */
  #pieces: Buffer[] = [];
  #pieceBytes = 0;
  #elementOpen = false;
  #sawComma = false;
  /** The envelope outside the results array (or the whole text of an 'other' answer). */
  #outside: Buffer[] = [];
  #keyBytes: number[] = [];
  #lastString = '';
  #lastKey = '';
  /** Bytes of the body before the chunk being scanned. */
  #consumed = 0;
  /** Where the element being read began, as an offset in the body. */
  #entryStart = 0;
  #outsideBytes = 0;

  constructor(limits: BatchLimits) {
    this.#limits = { maxEntryBytes: Infinity, ...limits };
  }

  /**
   * Takes the next chunk of the body; returns the batches it completed. Throws on what cannot be
   * JSON, and EntryTooLongError as soon as an element or the envelope is too long, ended or not.
   */
  push(chunk: Buffer): string[] {
    const batches = this.#scan(chunk);
    this.#consumed += chunk.length;
    const max = this.#limits.maxEntryBytes;
    if (this.#streamDepth > 0 && this.#consumed - this.#entryStart > max) throw new EntryTooLongError('entry');
    if (this.#outsideBytes > max) throw new EntryTooLongError('envelope');
    return batches;
  }

  /**
   * The scan of one chunk.
   * Long because it is one loop over every byte of the body (100 MB for a bare array of a million
   * entries), with the scanner's state in locals: split into helpers, each byte would pay a call
   * and the state's trip through the object's fields.
   */
  #scan(chunk: Buffer): string[] {
    const batches: string[] = [];
    let i = 0;
    if (!this.#started) {
      while (i < chunk.length && isSpace(chunk[i]!)) i++;
      if (i === chunk.length) return batches;
      this.#started = true;
      const first = chunk[i]!;
      this.#shape = first === OPEN_ARRAY ? 'array' : first === OPEN_OBJECT ? 'envelope' : 'other';
    }
    if (this.#shape === 'other') {
      this.#keepOutside(chunk);
      return batches;
    }
    // The state lives in locals through the loop (it runs once per byte of a 100 MB body).
    let depth = this.#depth;
    let streamDepth = this.#streamDepth;
    let inString = this.#inString;
    let escaped = this.#escaped;
    let elementOpen = this.#elementOpen;
    const envelope = this.#shape === 'envelope';
    // Start of the current piece: of the streamed elements when inside the array, else of the outside text.
    let from = i;
    let nextBackslash = -1;
    for (; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (inString) {
        if (escaped) {
          escaped = false;
          if (envelope && depth === 1) this.#keyByte(byte);
          continue;
        }
        if (envelope && depth === 1) {
          // A member name of the envelope: read byte by byte, to know when it is `results`.
          this.#keyByte(byte);
          if (byte === BACKSLASH) escaped = true;
          else if (byte === QUOTE) {
            inString = false;
            this.#lastString = this.#decodeKey();
          }
          continue;
        }
        // Inside an entry's string: jump to its next quote or backslash (indexOf is native code).
        if (nextBackslash < i) {
          nextBackslash = chunk.indexOf(BACKSLASH, i);
          if (nextBackslash === -1) nextBackslash = chunk.length;
        }
        let quote = chunk.indexOf(QUOTE, i);
        if (quote === -1) quote = chunk.length;
        if (nextBackslash < quote) {
          i = nextBackslash;
          escaped = true;
        } else if (quote < chunk.length) {
          i = quote;
          inString = false;
        } else {
          i = chunk.length;
        }
        continue;
      }
      if (isSpace(byte)) continue;
      if (this.#ended) throw new Error('unexpected data after the JSON value');
      if (streamDepth === 1) {
        // Between elements of the streamed array: a comma may close a batch, the bracket closes the array.
        if (byte === COMMA) {
          if (!elementOpen) throw new Error('empty element in the list array');
          elementOpen = false;
          this.#sawComma = true;
          this.#entryEnds(i);
          const bytes = this.#pieceBytes + (i - from);
          const { entries, minBytes, maxBytes } = this.#limits;
          if ((++this.#batchEntries >= entries && bytes >= minBytes) || bytes >= maxBytes) {
            batches.push(this.#batch(chunk.subarray(from, i)));
            from = i + 1;
          }
          continue;
        }
        if (byte === CLOSE_ARRAY) {
          if (!elementOpen && this.#sawComma) throw new Error('trailing comma in the list array');
          this.#entryEnds(i);
          const last = this.#batch(chunk.subarray(from, i));
          if (elementOpen) batches.push(last);
          streamDepth = 0;
          depth--;
          from = i;
          if (depth === 0) this.#ended = true;
          continue;
        }
      }
      if (streamDepth > 0) elementOpen = true;
      if (byte === QUOTE) {
        inString = true;
        if (envelope && depth === 1) this.#keyBytes = [byte];
      } else if (byte === OPEN_ARRAY || byte === OPEN_OBJECT) {
        depth++;
        if (streamDepth > 0) streamDepth++;
        else if (byte === OPEN_ARRAY && (envelope ? depth === 2 && this.#lastKey === 'results' : depth === 1)) {
          if (this.#streamed) throw new Error("the envelope has more than one 'results' member");
          this.#streamed = true;
          streamDepth = 1;
          elementOpen = false;
          this.#entryStart = this.#consumed + i + 1;
          this.#keepOutside(chunk.subarray(from, i + 1));
          from = i + 1;
        }
      } else if (byte === CLOSE_ARRAY || byte === CLOSE_OBJECT) {
        depth--;
        if (streamDepth > 0) streamDepth--;
        if (depth < 0) throw new Error('unbalanced closing bracket');
        if (depth === 0) this.#ended = true;
      } else if (depth === 1 && byte === COLON) {
        this.#lastKey = this.#lastString;
      } else if (depth === 1 && byte === COMMA) {
        this.#lastKey = '';
      }
    }
    this.#depth = depth;
    this.#streamDepth = streamDepth;
    this.#inString = inString;
    this.#escaped = escaped;
    this.#elementOpen = elementOpen;
    if (streamDepth > 0) {
      this.#pieces.push(chunk.subarray(from));
      this.#pieceBytes += chunk.length - from;
    } else if (from < chunk.length) {
      this.#keepOutside(chunk.subarray(from));
    }
    return batches;
  }

  /** Called once the body has ended; throws when it ended early. */
  end(): SplitEnd {
    if (this.#shape === 'other') return { shape: 'other', text: Buffer.concat(this.#outside).toString('utf8') };
    if (!this.#ended || this.#inString) throw new Error('unexpected end of the JSON text (truncated)');
    if (this.#shape === 'array') return { shape: 'array' };
    return { shape: 'envelope', envelope: Buffer.concat(this.#outside).toString('utf8') };
  }

  /** An element ended at offset i of the chunk being scanned: checked, and the next one begins after it. */
  #entryEnds(i: number): void {
    const end = this.#consumed + i;
    if (end - this.#entryStart > this.#limits.maxEntryBytes) throw new EntryTooLongError('entry');
    this.#entryStart = end + 1;
  }

  #keepOutside(part: Buffer): void {
    this.#outside.push(part);
    this.#outsideBytes += part.length;
  }

  #keyByte(byte: number): void {
    if (this.#keyBytes.length <= MAX_KEY_BYTES) this.#keyBytes.push(byte);
  }

  /** The envelope member name just read, unescaped; '' when it is too long to be `results` or is not valid. */
  #decodeKey(): string {
    if (this.#keyBytes.length > MAX_KEY_BYTES) return '';
    try {
      return JSON.parse(Buffer.from(this.#keyBytes).toString('utf8')) as string;
    } catch {
      return '';
    }
  }

  #batch(tail: Buffer): string {
    this.#pieces.push(tail);
    const text = `[${Buffer.concat(this.#pieces, this.#pieceBytes + tail.length).toString('utf8')}]`;
    this.#pieces = [];
    this.#pieceBytes = 0;
    this.#batchEntries = 0;
    return text;
  }
}
