import type { Queryable } from './database.ts';

/** What node-postgres hands a submittable: its protocol connection, whose `stream` is the socket. */
interface PgConnection {
  stream: NodeJS.EventEmitter;
  query(text: string): void;
}

/** Backend message types read here (PostgreSQL protocol, "Message Formats"). */
const COPY_DATA = 0x64; // 'd'
const COPY_DONE = 0x63; // 'c'
/** What Postgres may send before or between CopyData messages that the COPY itself has no use for. */
const PASSED_OVER = new Set([
  0x48, // 'H' CopyOutResponse
  0x4e, // 'N' NoticeResponse
  0x53, // 'S' ParameterStatus
  0x41, // 'A' NotificationResponse
]);

/** Whether a message of this type belongs to the COPY (read here), not to node-postgres (an ErrorResponse, say). */
function isCopyMessage(type: number): boolean {
  return type === COPY_DATA || type === COPY_DONE || PASSED_OVER.has(type);
}

/** Called with the bytes of one CopyData message: buf[start, end). */
export type CopyDataHandler = (buf: Buffer, start: number, end: number) => void;

/**
 * COPY ... TO STDOUT read straight off the node-postgres connection's socket: each CopyData
 * message's bytes go to `onData` where they lie in the socket's chunk, with no Buffer made for them.
 * pg-copy-streams (and node-postgres's own parser) make a Buffer per message, and Postgres sends a
 * message per row: a million-row read made a million Buffers, about a third of the client's time
 * reading the current-row index (docs/performance.md, P3).
 *
 * As pg-copy-streams does, it takes the socket's data from node-postgres's parser once submitted, and
 * gives it back after CopyDone, or at an ErrorResponse (or any message a COPY does not send), which
 * node-postgres then reads and fails the query with. Messages Postgres may send between (notices,
 * parameter status, notifications) are passed over.
 */
class CopyOut {
  readonly text: string;
  readonly done: Promise<void>;
  readonly #onData: CopyDataHandler;
  #resolve!: () => void;
  #reject!: (err: unknown) => void;
  #connection: PgConnection | undefined;
  #pgListener: ((chunk: Buffer) => void) | undefined;
  /** An incomplete message at the end of the last chunk. */
  #rest: Buffer | undefined;
  /** A failure of onData: the rest of the COPY is read and passed over, then the read fails with it. */
  #failure: unknown;
  #failed = false;

  constructor(text: string, onData: CopyDataHandler) {
    this.text = text;
    this.#onData = onData;
    this.done = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    // Awaited by the caller; a failure before it is must not count as unhandled.
    this.done.catch(() => undefined);
  }

  /** node-postgres runs the query: the socket's data comes here until the COPY ends. An error returned fails it. */
  submit(connection: PgConnection): Error | undefined {
    this.#connection = connection;
    const listeners = connection.stream.listeners('data') as Array<(chunk: Buffer) => void>;
    if (listeners.length !== 1) return new Error(`COPY TO: expected one data listener on the connection, found ${listeners.length}`);
    this.#pgListener = listeners[0]!;
    connection.stream.removeListener('data', this.#pgListener);
    connection.stream.on('data', this.#read);
    connection.query(this.text);
    return undefined;
  }

  readonly #read = (buf: Buffer): void => {
    const start = this.#joinSplit(buf);
    if (start === undefined) return;
    let at = start;
    while (at + 5 <= buf.length) {
      const type = buf[at]!;
      // An ErrorResponse, or anything else a COPY does not send: node-postgres reads it from here.
      if (!isCopyMessage(type)) {
        this.#giveBack(buf.subarray(at));
        return;
      }
      const end = at + 1 + buf.readUInt32BE(at + 1);
      if (end > buf.length) break;
      if (this.#ended(buf, at, end)) {
        this.#giveBack(buf.subarray(end));
        return;
      }
      at = end;
    }
    if (at < buf.length) this.#rest = buf.subarray(at);
  };

  /**
   * Completes a message split over the last chunk with the head of this one, and hands it on: the
   * chunk itself is then read where it lies. (Joining the rest with the whole chunk copied every
   * socket chunk of a COPY once more, 70 MB for the million rows of a current-row index.) Returns
   * the offset in the chunk to read on from, or undefined when the chunk was used up, or was handed
   * back with the message (not the COPY's: node-postgres reads it).
   */
  #joinSplit(chunk: Buffer): number | undefined {
    let at = 0;
    while (this.#rest) {
      const rest = this.#rest;
      // The header first (type and length), then the rest of the message it gives.
      const total = rest.length >= 5 ? 1 + rest.readUInt32BE(1) : 5;
      if (rest.length < total) {
        const take = Math.min(total - rest.length, chunk.length - at);
        this.#rest = Buffer.concat([rest, chunk.subarray(at, at + take)]);
        at += take;
        if (this.#rest.length < total) return undefined;
        if (total === 5) continue;
      }
      const message = this.#rest;
      this.#rest = undefined;
      if (!isCopyMessage(message[0]!)) {
        this.#giveBack(Buffer.concat([message, chunk.subarray(at)]));
        return undefined;
      }
      if (this.#ended(message, 0, message.length)) {
        this.#giveBack(chunk.subarray(at));
        return undefined;
      }
    }
    return at;
  }

  /** Takes the whole COPY message buf[at, end): a CopyData's bytes to onData. Whether it was the CopyDone. */
  #ended(buf: Buffer, at: number, end: number): boolean {
    const type = buf[at]!;
    if (type === COPY_DATA) this.#data(buf, at + 5, end);
    return type === COPY_DONE;
  }

  #data(buf: Buffer, start: number, end: number): void {
    if (this.#failed) return;
    try {
      this.#onData(buf, start, end);
    } catch (err) {
      this.#failed = true;
      this.#failure = err;
    }
  }

  /** Hands the socket back to node-postgres's parser, with what is left of the chunk. */
  #giveBack(rest: Buffer): void {
    const connection = this.#connection!;
    connection.stream.removeListener('data', this.#read);
    connection.stream.on('data', this.#pgListener!);
    if (rest.length > 0) this.#pgListener!(rest);
  }

  handleCommandComplete(): void {}

  handleReadyForQuery(): void {
    if (this.#failed) this.#reject(this.#failure);
    else this.#resolve();
  }

  handleError(err: unknown): void {
    this.#reject(err);
  }
}

/**
 * Runs `copy ... to stdout` on q (a held node-postgres connection, otherwise idle) and hands each
 * CopyData message to onData as it arrives; resolves once Postgres has ended the COPY. A throw from
 * onData fails the COPY after it is read (the connection stays usable).
 */
export async function copyOut(q: Queryable, sql: string, onData: CopyDataHandler): Promise<void> {
  const copy = new CopyOut(sql, onData);
  // node-postgres runs a submittable on the connection and hands it back (not a promise).
  await q.query(copy as unknown as string);
  await copy.done;
}
