// Starts the sandbox: certificates (kept in a given folder: cert-files.ts), the CA file (removed on
// close when the sandbox made its directory), the data changes of its journal, the HTTPS server (plain HTTP on the port fails
// the TLS handshake), and the Sandbox handle.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../util/logger.ts';
import { DEFAULT_ACCOUNTS } from './auth.ts';
import { caFileIn, certificatesIn } from './cert-files.ts';
import { createControl, replayDataChanges } from './control.ts';
import { DataJournal } from './data-journal.ts';
import { createRequestHandler } from './router.ts';
import { SandboxState } from './state.ts';
import type { Sandbox, SandboxOptions } from './types.ts';

function formatOrigin(host: string, port: number): string {
  return host.includes(':') ? `https://[${host}]:${port}` : `https://${host}:${port}`;
}

/** Whether a bound address answers this machine only: 127.0.0.0/8, ::1, or an IPv4-mapped 127.x. */
export function isLoopbackAddress(address: string): boolean {
  return /^(::ffff:)?127\./i.test(address) || address === '::1';
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const host = options.host ?? '127.0.0.1';
  const logger = options.logger ?? silentLogger;
  const controlSecret = options.controlSecret ?? randomBytes(16).toString('hex');
  const state = new SandboxState(options.accounts ?? DEFAULT_ACCOUNTS, options.latencyMs ?? 0);
  const control = createControl(state);

  const names = new Set(['localhost', '127.0.0.1', '::1', host, ...(options.hostnames ?? [])]);
  for (const wildcard of ['0.0.0.0', '::']) names.delete(wildcard);
  const certDir = options.certDir ?? (await mkdtemp(join(tmpdir(), 'refsync-sandbox-')));
  const certs = await certificatesIn(certDir, [...names]);
  const caFile = caFileIn(certDir);
  const journal = options.dataFile ? new DataJournal(options.dataFile) : undefined;
  const replayed = journal ? replayDataChanges(control, journal) : 0;
  if (replayed > 0) logger.info({ changes: replayed, file: journal!.file }, 'sandbox data changes applied again');

  let origin = '';
  const server = createServer(
    { key: certs.keyPem, cert: certs.certPem, minVersion: 'TLSv1.2' },
    createRequestHandler({ state, control, controlSecret, logger, origin: () => origin, ...(journal ? { journal } : {}) }),
  );
  // A plain-HTTP request or a failed handshake: the socket is closed; say so at debug level only.
  server.on('tlsClientError', (err) => logger.debug({ err: err.message }, 'sandbox TLS handshake failed'));

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const port = bound.port;
  const urlHost = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  origin = formatOrigin(urlHost, port);
  logger.info({ url: origin, caFile }, 'sandbox listening');

  let closing: Promise<void> | null = null;
  return {
    url: origin,
    port,
    listening: { address: bound.address, port, loopback: isLoopbackAddress(bound.address) },
    caPem: certs.caPem,
    caFile,
    controlSecret,
    control,
    requestCount: () => state.requests,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }).then(async () => {
        // A directory the sandbox made for itself goes with it; a given certDir is left alone.
        if (!options.certDir) await rm(certDir, { recursive: true, force: true });
      });
      return closing;
    },
  };
}
