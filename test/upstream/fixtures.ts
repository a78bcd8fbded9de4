import diagnostics from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { generateCertificates } from '../../src/sandbox/certificates.ts';
import { startSandbox } from '../../src/sandbox/index.ts';
import type { Sandbox, SandboxOptions } from '../../src/sandbox/types.ts';
import { UpstreamClient, type ListBatch, type UpstreamClientOptions } from '../../src/upstream/index.ts';
import type { Logger } from '../../src/util/logger.ts';
import { afterAll, beforeAll, beforeEach } from 'vitest';

export const MACHINE = { email: 'machine@sandbox.test', password: 'sandbox-password' } as const;
export const KEYED = { email: 'keyed@sandbox.test', password: 'keyed-password', apiKey: 'sandbox-api-key-0001' } as const;

/** Short limits so failure paths finish in milliseconds; behaviour, not timing, is asserted. */
export const fast: Partial<UpstreamClientOptions> = {
  timeouts: { connectMs: 2000, headersMs: 2000, bodyMs: 2000 },
  retry: { attempts: 4, baseDelayMs: 5, maxDelayMs: 20, maxRetryAfterMs: 5000 },
};

export async function sandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  return startSandbox({ port: 0, ...options });
}

export function client(sb: Sandbox, options: Partial<UpstreamClientOptions> = {}, logger?: Logger): UpstreamClient {
  return new UpstreamClient({
    baseUrl: sb.url,
    environment: 'test',
    credentials: { ...MACHINE, apiKeyScheme: 'apikey' },
    ca: sb.caPem,
    ...fast,
    ...(logger ? { logger } : {}),
    ...options,
  });
}

/** Every page of a list, concatenated (tests only: the client itself never holds a whole list). */
export async function collect(pages: AsyncIterable<ListBatch>): Promise<unknown[]> {
  const all: unknown[] = [];
  for await (const batch of pages) all.push(...batch.entries);
  return all;
}

export async function failure(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await promise;
  } catch (err) {
    return err as Error & Record<string, unknown>;
  }
  throw new Error('expected a failure, got success');
}

/** The Authorization headers undici actually sent, seen through its diagnostics channel. */
export function watchAuthorization(): { values: Set<string>; stop(): void } {
  const values = new Set<string>();
  const listener = (message: unknown): void => {
    const headers = (message as { headers?: unknown }).headers;
    const text = Buffer.isBuffer(headers) ? headers.toString('latin1') : typeof headers === 'string' ? headers : '';
    for (const m of text.matchAll(/^authorization: *(\S+) +(\S+)\r?$/gim)) {
      values.add(m[2]!);
      if (m[1]!.toLowerCase() === 'basic') {
        const user = Buffer.from(m[2]!, 'base64').toString('utf8').split(':')[0];
        if (user) values.add(user);
      }
    }
  };
  diagnostics.subscribe('undici:client:sendHeaders', listener);
  return { values, stop: () => diagnostics.unsubscribe('undici:client:sendHeaders', listener) };
}

export interface TinyRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
}

export interface TinyServer {
  url: string;
  caPem: string;
  requests: TinyRequest[];
  /** TCP connections accepted so far (a refused-before-sending check needs 0). */
  connections(): number;
  close(): Promise<void>;
}

/** A minimal HTTPS server with its own throwaway CA, for answers the sandbox has no switch for. */
export async function tinyServer(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<TinyServer> {
  const certs = await generateCertificates(['127.0.0.1', 'localhost']);
  const requests: TinyRequest[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer({ cert: certs.certPem, key: certs.keyPem }, (req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    handler(req, res);
  });
  server.on('connection', (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    caPem: certs.caPem,
    requests,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/**
 * One sandbox for the test file, reset (data, switches, request log) before each test, closed
 * after the file. `assign` receives it once started.
 */
export function useResetSandbox(assign: (sb: Sandbox) => void): void {
  let sb: Sandbox | undefined;
  beforeAll(async () => {
    sb = await sandbox();
    assign(sb);
  });
  afterAll(async () => {
    await sb?.close();
  });
  beforeEach(() => {
    sb?.control.reset();
    sb?.control.resetRequestLog();
  });
}
