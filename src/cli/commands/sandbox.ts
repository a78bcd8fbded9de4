// `refsync sandbox [--port N] [--host H] [--latency MS] [--control-secret S] [--nmfc-count N] [--san NAME ...] [--cert-dir DIR] [--reset]`:
// serves the bundled upstream simulator over HTTPS until SIGINT or SIGTERM. Its folder (default
// ./.refsync/sandbox) keeps the certificate, the control secret and the data changes, so a restart
// keeps the CA path every command was given and the data the last sync saw (--reset forgets the data).
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createLogger } from '../../util/logger.ts';
import { parseCommandArgs, UsageError } from '../args.ts';
import { nextStopSignal } from '../stop-signals.ts';
import { DataJournal } from '../../sandbox/data-journal.ts';
import { DEFAULT_ACCOUNTS, startSandbox } from '../../sandbox/index.ts';

function integer(name: string, value: string | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) > max) throw new UsageError(`sandbox: --${name} must be an integer from 0 to ${max}, got '${value}'`);
  return Number(value);
}

const DEFAULT_SANDBOX_DIR = '.refsync/sandbox';

/** The control secret kept in the sandbox folder, made on its first start: scripts keep working across restarts. */
function keptSecret(dir: string): string {
  const file = join(dir, 'control-secret');
  if (existsSync(file)) {
    const kept = readFileSync(file, 'utf8').trim();
    if (kept) return kept;
  }
  const secret = randomBytes(16).toString('hex');
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  // The mode given above applies only to a file writeFileSync creates.
  chmodSync(file, 0o600);
  return secret;
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs('sandbox', argv);
  const port = integer('port', values.port, 8443, 65535);
  const latencyMs = integer('latency', values.latency, 0, 600_000);
  const nmfcCount = values['nmfc-count'] === undefined ? undefined : integer('nmfc-count', values['nmfc-count'], 0, 9_000_000);
  const host = values.host ?? '127.0.0.1';
  if (host.trim() === '') throw new UsageError('sandbox: --host must not be empty');
  const secret = values['control-secret'];
  if (secret !== undefined && secret === '') throw new UsageError('sandbox: --control-secret must not be empty');

  const logger = createLogger({ name: 'sandbox' });
  const hostnames = values.san ?? [];
  if (hostnames.some((n) => !/^[A-Za-z0-9.:-]+$/.test(n))) throw new UsageError('sandbox: --san takes a host name or IP address');
  if (values['cert-dir'] === '') throw new UsageError('sandbox: --cert-dir must not be empty');
  const certDir = resolve(values['cert-dir'] ?? DEFAULT_SANDBOX_DIR);
  mkdirSync(certDir, { recursive: true });
  const dataFile = join(certDir, 'data-changes.jsonl');
  if (values.reset) new DataJournal(dataFile).clear();
  const sandbox = await startSandbox({ port, host, latencyMs, logger, hostnames, controlSecret: secret ?? keptSecret(certDir), certDir, dataFile });
  if (nmfcCount !== undefined) sandbox.control.setGenerated('nmfc_codes', nmfcCount);

  const stopped = nextStopSignal();
  const [first] = DEFAULT_ACCOUNTS;
  const loginBody = JSON.stringify({ email: first?.email, password: first?.password });
  const accounts = DEFAULT_ACCOUNTS.map((a) => `  ${a.email} / ${a.password}  (api key: ${a.apiKey ?? 'none'})`).join('\n');
  const { listening } = sandbox;
  const bound = listening.address.includes(':') ? `[${listening.address}]:${listening.port}` : `${listening.address}:${listening.port}`;
  if (!listening.loopback) {
    process.stderr.write(
      `refsync: warning: the sandbox listens on ${bound}, beyond this machine's loopback: whoever reaches it can use its accounts, and its control API with the secret\n`,
    );
  }
  process.stdout.write(
    [
      listening.loopback ? `refsync sandbox listening on ${sandbox.url}` : `refsync sandbox listening on ${bound}; on this machine: ${sandbox.url}`,
      `CA certificate: ${sandbox.caFile}`,
      `accounts (sandbox-only, not real secrets):`,
      accounts,
      `control secret: ${sandbox.controlSecret}  (header X-Sandbox-Control, POST ${sandbox.url}/__sandbox/<name>; switches: docs/sandbox.md)`,
      `kept in ${certDir}: the same CA, secret and data changes at the next start (--reset starts from the bundled data)`,
      `try:`,
      `  curl --cacert ${sandbox.caFile} -X POST ${sandbox.url}/v2/auth/token/ -H 'content-type: application/json' -d '${loginBody}'`,
      `stop with Ctrl-C`,
      '',
    ].join('\n'),
  );

  const signal = await stopped;
  logger.info({ signal }, 'sandbox stopping');
  await sandbox.close();
  return 0;
}
