import type { Duplex } from 'node:stream';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import type { Queryable } from './database.ts';

const DEFAULT_STALL_MS = 120_000;

export class CopyStalledError extends Error {
  readonly code = 'copy_stalled';
  constructor(table: string, stallMs: number) {
    super(`COPY into ${table} made no progress for ${stallMs / 1000} s; the connection was closed`);
  }
}

export interface CopyInOptions {
  /** No chunk accepted for this long fails the COPY (default 120_000 ms). */
  stallMs?: number;
}

/** pg-copy-streams keeps the node-postgres connection it was submitted on (untyped): its socket is `stream`. */
interface Submitted {
  connection?: { stream: Duplex } | null;
}

/**
 * COPY ... FROM STDIN on a held node-postgres connection (q), writing chunks with backpressure.
 * q must be otherwise idle, so that node-postgres starts the COPY at once rather than queueing it.
 *
 * Why a deadline: a COPY once hung for over 11 minutes with Postgres waiting for client data
 * (wait event ClientRead) and this process idle, and it never reproduced. Postgres does not apply
 * statement_timeout to a backend waiting on its client, and nothing here timed out, so a worker
 * job would have held its pool connection forever. When no chunk is accepted for stallMs, the
 * socket is closed: Postgres ends the backend, and so the COPY, when it next reads from it (at
 * once if it waits in ClientRead), and the client's error makes withConnection drop the session.
 */
export async function copyIn(q: Queryable, sql: string, chunks: Iterable<string>, options: CopyInOptions = {}): Promise<void> {
  const stallMs = options.stallMs ?? DEFAULT_STALL_MS;
  const stream = copyFrom(sql);
  // node-postgres runs a submittable (the copy stream) on the connection and hands it back.
  await q.query(stream as unknown as string);
  let stalled: CopyStalledError | undefined;
  const timer = setTimeout(() => {
    stalled = new CopyStalledError(/^\s*copy\s+([^\s(]+)/i.exec(sql)?.[1] ?? sql, stallMs);
    // Destroying the copy stream would not do: it sends CopyFail and waits for Postgres to answer.
    // The closed socket makes node-postgres fail the copy stream, which ends the pipeline below.
    (stream as Submitted).connection?.stream.destroy();
  }, stallMs);
  // Progress is the copy stream taking chunks. Piped, the next chunk is pulled only once the copy
  // stream has room, and pg-copy-streams calls a write back only once the socket has taken it: a
  // pull means what came before reached the socket, but for the streams' buffers. Not the
  // stream's 'drain': a write the socket takes at once calls back synchronously, and then no drain
  // is emitted, so a COPY that Postgres keeps up with would look stalled. After the last pull the
  // timer also bounds Postgres confirming the COPY, which is quick once it has the data.
  function* pulled(): Generator<string> {
    for (const chunk of chunks) {
      timer.refresh();
      yield chunk;
    }
  }
  try {
    await pipeline(Readable.from(pulled(), { objectMode: false }), stream);
  } catch (err) {
    throw stalled ?? err;
  } finally {
    clearTimeout(timer);
  }
}
