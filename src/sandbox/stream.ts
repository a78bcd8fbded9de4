// Writes a body of text chunks to the response with backpressure (waits for 'drain'), batching
// small chunks. Body faults end it early: truncated (the chunked response completes, the JSON does
// not), stalled (nothing more is ever sent) or reset (the socket is destroyed mid-body).
import type { ServerResponse } from 'node:http';

export type BodyEnding = 'full' | 'truncate' | 'stall' | 'reset';

const BATCH_BYTES = 64 * 1024;
/** How much of a body a cut fault looks at before deciding where to cut. */
const CUT_WINDOW = 64 * 1024;

function waitDrain(res: ServerResponse): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(ok);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}

function gone(res: ServerResponse): boolean {
  return res.destroyed || res.writableEnded;
}

async function writeAll(res: ServerResponse, chunks: Iterator<string>): Promise<void> {
  let batch: string[] = [];
  let size = 0;
  for (let r = chunks.next(); !r.done; r = chunks.next()) {
    batch.push(r.value);
    size += r.value.length;
    if (size < BATCH_BYTES) continue;
    if (gone(res)) return;
    const ok = res.write(batch.join(''));
    batch = [];
    size = 0;
    if (!ok && !(await waitDrain(res))) return;
  }
  if (gone(res)) return;
  res.end(batch.join(''));
}

/** Sends `chunks` one byte every intervalMs (the drip fault), for as long as the client stays. */
export async function dripBody(res: ServerResponse, chunks: Iterable<string>, intervalMs: number): Promise<void> {
  res.flushHeaders();
  for (const chunk of chunks) {
    for (const byte of Buffer.from(chunk)) {
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
      if (gone(res)) return;
      res.write(Buffer.of(byte));
    }
  }
  if (!gone(res)) res.end();
}

/** Sends `chunks` (headers must be set, not yet sent) and ends the response as `ending` says. */
export async function writeBody(res: ServerResponse, chunks: Iterable<string>, ending: BodyEnding): Promise<void> {
  const it = chunks[Symbol.iterator]();
  if (ending === 'full') return writeAll(res, it);

  // Look at up to CUT_WINDOW bytes: a short body is cut in half, a long one after half the window.
  const seen: string[] = [];
  let size = 0;
  let finished = false;
  while (size < CUT_WINDOW) {
    const r = it.next();
    if (r.done) {
      finished = true;
      break;
    }
    seen.push(r.value);
    size += Buffer.byteLength(r.value);
  }
  const head = Buffer.from(seen.join(''));
  const cut = finished ? Math.floor(head.length / 2) : CUT_WINDOW / 2;
  const part = head.subarray(0, Math.max(1, cut));
  if (gone(res)) return;
  if (ending === 'truncate') {
    res.end(part);
  } else if (ending === 'reset') {
    res.write(part, () => res.socket?.destroy());
  } else {
    res.write(part); // stall: never another byte; the socket stays open until the client or close() ends it
  }
}
