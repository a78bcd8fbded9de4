// `refsync sandbox [--port N] [--host H] [--latency MS] [--control-secret S] [--nmfc-count N] [--san NAME ...] [--cert-dir DIR]`:
// serves the bundled upstream simulator over HTTPS until SIGINT or SIGTERM.
import { createLogger } from '../../util/logger.ts';
import { parseCommandArgs, UsageError } from '../args.ts';
import { DEFAULT_ACCOUNTS, startSandbox } from '../../sandbox/index.ts';

function integer(name: string, value: string | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) > max) throw new UsageError(`sandbox: --${name} must be an integer from 0 to ${max}, got '${value}'`);
  return Number(value);
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
  const certDir = values['cert-dir'];
  if (certDir !== undefined && certDir === '') throw new UsageError('sandbox: --cert-dir must not be empty');
  const sandbox = await startSandbox({
    port,
    host,
    latencyMs,
    logger,
    hostnames,
    ...(secret ? { controlSecret: secret } : {}),
    ...(certDir ? { certDir } : {}),
  });
  if (nmfcCount !== undefined) sandbox.control.setGenerated('nmfc_codes', nmfcCount);

  const [first] = DEFAULT_ACCOUNTS;
  const loginBody = JSON.stringify({ email: first?.email, password: first?.password });
  const accounts = DEFAULT_ACCOUNTS.map((a) => `  ${a.email} / ${a.password}  (api key: ${a.apiKey ?? 'none'})`).join('\n');
  process.stdout.write(
    [
      `refsync sandbox listening on ${sandbox.url}`,
      `CA certificate: ${sandbox.caFile}`,
      `accounts (sandbox-only, not real secrets):`,
      accounts,
      `control secret: ${sandbox.controlSecret}  (header X-Sandbox-Control, POST ${sandbox.url}/__sandbox/<name>)`,
      `try:`,
      `  curl --cacert ${sandbox.caFile} -X POST ${sandbox.url}/v2/auth/token/ -H 'content-type: application/json' -d '${loginBody}'`,
      `stop with Ctrl-C`,
      '',
    ].join('\n'),
  );

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    const stop = (s: NodeJS.Signals) => resolve(s);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  logger.info({ signal }, 'sandbox stopping');
  await sandbox.close();
  return 0;
}
