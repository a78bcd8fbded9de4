// A local HTTPS webhook receiver for the alert tests: a throwaway CA and a localhost certificate,
// every request recorded, the answer chosen per request.
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll } from 'vitest';
import { generateCertificates } from '../../src/sandbox/index.ts';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

export interface Receiver {
  /** https://localhost:PORT/hook */
  url: string;
  port: number;
  caPem: string;
  requests: ReceivedRequest[];
  /** Chooses the answer to each request (default 204). */
  respond: (req: ReceivedRequest) => Reply;
  /** Answers this long after the request arrived (default 0). */
  delayMs: number;
  /** Stops listening (connections are then refused); start() listens again on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
}

const certs = await generateCertificates(['localhost', '127.0.0.1']);
const open: Receiver[] = [];

afterAll(async () => {
  await Promise.all(open.splice(0).map((r) => r.stop()));
});

export async function startReceiver(path = '/hook'): Promise<Receiver> {
  let server: Server | undefined;
  let port = 0;
  const receiver: Receiver = {
    url: '',
    port: 0,
    caPem: certs.caPem,
    requests: [],
    respond: () => ({ status: 204 }),
    delayMs: 0,
    async start() {
      const s = createServer({ key: certs.keyPem, cert: certs.certPem }, (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const received: ReceivedRequest = {
            method: req.method ?? '',
            path: req.url ?? '',
            headers: req.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          };
          receiver.requests.push(received);
          const reply = receiver.respond(received);
          setTimeout(() => {
            res.writeHead(reply.status, reply.headers ?? {});
            res.end(reply.body ?? '');
          }, receiver.delayMs);
        });
      });
      await new Promise<void>((resolve, reject) => {
        s.once('error', reject);
        s.listen(port, '127.0.0.1', () => resolve());
      });
      server = s;
      port = (s.address() as AddressInfo).port;
      receiver.port = port;
      receiver.url = `https://localhost:${port}${path}`;
    },
    async stop() {
      const s = server;
      server = undefined;
      if (!s) return;
      s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    },
  };
  await receiver.start();
  open.push(receiver);
  return receiver;
}
