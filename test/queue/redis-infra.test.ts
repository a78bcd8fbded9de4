// Redis as managed services offer it: TLS (rediss://) with a CA of the deployment's own, an ACL
// user with a password, and a cluster-mode Redis given as REDIS_URL alone, which refsync refuses at
// start (test/faults/worker-cluster.test.ts runs it as a cluster). Each case runs a redis-server of its
// own; certificates are made at test time.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateCertificates } from '../../src/sandbox/certificates.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { sandboxEnv } from '../helpers/source.ts';
import {
  freePort,
  hasExited,
  killProcess,
  onCleanup,
  onFreePort,
  runCli,
  startRedisServer,
  startTestWorker,
  waitFor,
  workerConfig,
  testQueuePrefix,
} from './helpers.ts';
import { testTempDir } from '../helpers/temp-dir.ts';

const tdb = useTestDatabase();
const dir = testTempDir('refsync-redis-infra');
const write = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

async function runOf(environment: string) {
  const { rows } = await tdb.db.query<{ status: string }>('select status from refdata.sync_runs where environment = $1', [environment]);
  return rows[0]?.status;
}

describe('Redis as deployed', () => {
  it('rediss:// with REFSYNC_REDIS_CA_FILE: worker and trigger sync through it; a wrong CA fails with one line naming the setting', async () => {
    const certs = await generateCertificates(['localhost', '127.0.0.1']);
    let tlsPort = 0;
    await startRedisServer(async () => {
      tlsPort = await freePort();
      return [
        '--tls-port',
        String(tlsPort),
        '--tls-cert-file',
        write('redis.crt', certs.certPem),
        '--tls-key-file',
        write('redis.key', certs.keyPem),
        '--tls-auth-clients',
        'no',
      ];
    });
    const url = `rediss://127.0.0.1:${tlsPort}`;
    const caFile = write('redis-ca.pem', certs.caPem);
    const sb = await useSandbox();
    const prefix = testQueuePrefix();
    const extra = { REFSYNC_ENVIRONMENT: 'redis-tls', REFSYNC_LISTS: 'shipment_modes', REDIS_URL: url, REFSYNC_REDIS_CA_FILE: caFile };
    await startTestWorker(workerConfig(sb, tdb.url, extra), prefix);
    const trigger = await runCli(['trigger'], { ...sandboxEnv(sb, extra), REFSYNC_QUEUE_PREFIX: prefix });
    expect(trigger.code, trigger.stderr).toBe(0);
    await waitFor(async () => (await runOf('redis-tls')) === 'succeeded', 'the run over TLS Redis');

    const wrong = await runCli(['trigger'], { ...sandboxEnv(sb, extra), REFSYNC_REDIS_CA_FILE: write('other-ca.pem', (await generateCertificates()).caPem) });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr.trim().split('\n')).toHaveLength(1);
    expect(wrong.stderr).toMatch(/^refsync: REFSYNC_REDIS_CA_FILE: the TLS certificate of Redis at 127\.0\.0\.1:\d+ is not trusted/);
    const plain = await runCli(['trigger'], { ...sandboxEnv(sb, extra), REDIS_URL: url.replace('rediss:', 'redis:') });
    expect(plain.stderr.trim()).toBe('refsync: REFSYNC_REDIS_CA_FILE: is set, but REDIS_URL does not start with rediss:// (TLS)');
  });

  it('an ACL user with a password works; a wrong password fails with one line that does not echo it', async () => {
    const redis = await startRedisServer(['--user', 'default', 'off', '--user', 'refsync', 'on', '>acl-secret-pw', '~*', '&*', '+@all']);
    const sb = await useSandbox();
    const prefix = testQueuePrefix();
    const url = `redis://refsync:acl-secret-pw@127.0.0.1:${redis.port}`;
    const extra = { REFSYNC_ENVIRONMENT: 'redis-acl', REFSYNC_LISTS: 'shipment_modes', REDIS_URL: url };
    await startTestWorker(workerConfig(sb, tdb.url, extra), prefix);
    const trigger = await runCli(['trigger'], { ...sandboxEnv(sb, extra), REFSYNC_QUEUE_PREFIX: prefix });
    expect(trigger.code, trigger.stderr).toBe(0);
    await waitFor(async () => (await runOf('redis-acl')) === 'succeeded', 'the run with an ACL user');

    const wrong = await runCli(['trigger'], { ...sandboxEnv(sb, extra), REDIS_URL: `redis://refsync:not-the-pw-123@127.0.0.1:${redis.port}` });
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr.trim().split('\n')).toHaveLength(1);
    expect(wrong.stderr).toMatch(/^refsync: Redis at 127\.0\.0\.1:\d+ is not reachable/);
    expect(wrong.stderr).not.toContain('not-the-pw-123');
  });

  it('Sentinel: REDIS_SENTINELS and REDIS_SENTINEL_NAME find the primary; REDIS_URL then gives no host that is used', async () => {
    const primary = await startRedisServer();
    const sentinelPort = await onFreePort('redis sentinel', async (port) => {
      const conf = write(`sentinel-${port}.conf`, `port ${port}\nbind 127.0.0.1\ndir ${dir}\nsentinel monitor refsync-primary 127.0.0.1 ${primary.port} 1\n`);
      const sentinel = spawn('redis-server', [conf, '--sentinel'], { stdio: ['ignore', 'pipe', 'pipe'] });
      onCleanup(() => killProcess(sentinel));
      let out = '';
      sentinel.stdout.on('data', (d: Buffer) => (out += d.toString()));
      await waitFor(() => out.includes('+monitor master refsync-primary') || hasExited(sentinel), 'the sentinel to monitor the primary', 10_000, 50);
      return hasExited(sentinel) ? undefined : port;
    });
    const sb = await useSandbox();
    const prefix = testQueuePrefix();
    // Port 1 answers nothing: the worker and the trigger can only reach Redis through the sentinel.
    const extra = {
      REFSYNC_ENVIRONMENT: 'redis-sentinel',
      REFSYNC_LISTS: 'shipment_modes',
      REDIS_URL: 'redis://127.0.0.1:1',
      REDIS_SENTINELS: `127.0.0.1:${sentinelPort}`,
      REDIS_SENTINEL_NAME: 'refsync-primary',
    };
    await startTestWorker(workerConfig(sb, tdb.url, extra), prefix);
    const trigger = await runCli(['trigger'], { ...sandboxEnv(sb, extra), REFSYNC_QUEUE_PREFIX: prefix });
    expect(trigger.code, trigger.stderr).toBe(0);
    await waitFor(async () => (await runOf('redis-sentinel')) === 'succeeded', 'the run through Sentinel');

    const bad = await runCli(['trigger'], { ...sandboxEnv(sb, extra), REDIS_SENTINELS: 'sentinel-without-port' });
    expect(bad.stderr.trim()).toBe('refsync: REDIS_SENTINELS: expected host:port of each sentinel, comma-separated (e.g. s1:26379,s2:26379)');
    expect(bad.code).toBe(2);
  });

  it('a cluster-mode Redis in REDIS_URL alone is refused with one line naming REDIS_CLUSTER_NODES', async () => {
    const redis = await startRedisServer(['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${Date.now()}.conf`)]);
    const sb = await useSandbox();
    const trigger = await runCli(['trigger'], { ...sandboxEnv(sb), REDIS_URL: redis.url });
    expect(trigger.code).toBe(2);
    expect(trigger.stderr.trim()).toMatch(/^refsync: REDIS_URL: Redis at 127\.0\.0\.1:\d+ runs in cluster mode; set REDIS_CLUSTER_NODES to its nodes/);
    expect(trigger.stderr.trim().split('\n')).toHaveLength(1);
  });
});
