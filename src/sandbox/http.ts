// Small response and request helpers shared by the handlers.
import type { IncomingMessage, ServerResponse, OutgoingHttpHeaders } from 'node:http';

/** Sends a complete JSON response and returns its status. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: OutgoingHttpHeaders = {}): number {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
  return status;
}

/** Sends a complete text response (text/plain unless the headers say otherwise) and returns its status. */
export function sendText(res: ServerResponse, status: number, text: string, headers: OutgoingHttpHeaders = {}): number {
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
  return status;
}

/** The request body, or null when it is larger than `limit` bytes (the rest is discarded). */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooLarge = true;
      else parts.push(chunk);
    });
    req.on('end', () => resolve(tooLarge ? null : Buffer.concat(parts)));
    req.on('error', reject);
  });
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
