// No Docker engine runs the tests: the deployment files are checked as data.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { repoRoot } from './helpers.ts';

const read = (path: string) => readFileSync(`${repoRoot}${path}`, 'utf8');

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  entrypoint?: string[];
  profiles?: string[];
  environment?: Record<string, string>;
  secrets?: string[];
  ports?: string[];
  healthcheck?: { test?: string[]; disable?: boolean };
  depends_on?: Record<string, { condition: string }>;
  restart?: string;
  network_mode?: string;
}

describe('docker-compose.yml', () => {
  const compose = parse(read('docker-compose.yml'), { merge: true }) as {
    services: Record<string, Service>;
    secrets: Record<string, { file: string }>;
    volumes: Record<string, unknown>;
  };
  const s = compose.services;

  it('has Postgres 17, Redis 7 with noeviction and an append-only file, migrate, worker, and the sandbox profile', () => {
    expect(Object.keys(s).sort()).toEqual(['migrate', 'postgres', 'redis', 'sandbox', 'sandbox-worker', 'worker']);
    expect(s.postgres!.image).toMatch(/^postgres:17/);
    expect(s.redis!.image).toMatch(/^redis:7/);
    const redis = s.redis!.command!.join(' ');
    expect(redis).toContain('--maxmemory-policy noeviction');
    expect(redis).toContain('--appendonly yes');
    expect(s.postgres!.healthcheck!.test!.join(' ')).toContain('pg_isready');
    expect(s.redis!.healthcheck!.test).toEqual(['CMD', 'redis-cli', 'ping']);
    expect(s.worker!.healthcheck!.test!.join(' ')).toContain('/readyz');
    for (const name of ['sandbox', 'sandbox-worker']) expect(s[name]!.profiles).toEqual(['sandbox']);
    for (const name of ['postgres', 'redis', 'migrate', 'worker']) expect(s[name]!.profiles).toBeUndefined();
  });

  it('runs migrate once before the worker, which waits for healthy Postgres and Redis', () => {
    expect(s.migrate!.command).toEqual(['migrate']);
    expect(s.migrate!.restart).toBe('no');
    expect(s.migrate!.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    expect(s.worker!.command).toEqual(['worker']);
    expect(s.worker!.depends_on).toEqual({
      migrate: { condition: 'service_completed_successfully' },
      postgres: { condition: 'service_healthy' },
      redis: { condition: 'service_healthy' },
    });
    expect(s['sandbox-worker']!.depends_on!.sandbox).toEqual({ condition: 'service_healthy' });
    // The sandbox worker reaches the simulator by its service name, which its certificate names,
    // and trusts the CA the simulator writes to their shared volume.
    expect(s.sandbox!.command).toEqual(expect.arrayContaining(['--san', 'sandbox', '--cert-dir', '/tmp/sandbox-ca']));
    expect(s['sandbox-worker']!.environment!.REFSYNC_BASE_URL).toBe('https://sandbox:8443');
    expect(s['sandbox-worker']!.environment!.REFSYNC_CA_FILE).toBe('/tmp/sandbox-ca/sandbox-ca.pem');
    expect(s['sandbox-worker']!.network_mode).toBeUndefined();
  });

  it('gives the worker its secrets as files, and its port on loopback only', () => {
    const env = s.worker!.environment!;
    expect(env.REFSYNC_PASSWORD_FILE).toBe('/run/secrets/refsync_password');
    expect(env.REFSYNC_DASHBOARD_PASSWORD_FILE).toBe('/run/secrets/dashboard_password');
    expect(env.REFSYNC_PASSWORD).toBeUndefined();
    expect(env.DATABASE_URL).toMatch(/^postgres:\/\/refsync:\$\{POSTGRES_PASSWORD/);
    expect(env.REDIS_URL).toBe('redis://redis:6379');
    expect(s.worker!.secrets!.sort()).toEqual(['dashboard_password', 'refsync_password']);
    for (const name of s.worker!.secrets!) expect(compose.secrets[name]!.file).toMatch(/^\.\/secrets\//);
    expect(s.worker!.ports!.every((p) => p.startsWith('127.0.0.1:'))).toBe(true);
    expect(Object.keys(compose.volumes)).toEqual(expect.arrayContaining(['postgres-data', 'redis-data']));
  });
});

describe('Dockerfile', () => {
  const text = read('Dockerfile');
  it('is multi-stage on node:24-slim, installs production dependencies only, runs as non-root `refsync worker`', () => {
    expect(text.match(/^FROM node:24-slim/gm)).toHaveLength(2);
    expect(text).toMatch(/^RUN npm ci --omit=dev/m);
    // The base image's node is the only runtime: the Node binary packages of optionalDependencies stay out.
    expect(text).toMatch(/^RUN npm ci .*--omit=optional/m);
    expect(text).toMatch(/^USER node$/m);
    expect(text).toContain('ENTRYPOINT ["node", "--max-semi-space-size=2", "bin/refsync.js"]');
    expect(text).toContain('CMD ["worker"]');
    for (const dir of ['bin', 'src', 'migrations']) expect(text).toMatch(new RegExp(`^COPY ${dir} \\./${dir}$`, 'm'));
    // No build step: Node 24 strips the types of src/ at run time.
    expect(text).not.toMatch(/npm run build|tsc/);
  });
});

describe('.env.example', () => {
  it('names every variable of the contract', () => {
    const text = read('.env.example');
    const contract = [
      'DATABASE_URL', 'REDIS_URL', 'REFSYNC_BASE_URL', 'REFSYNC_ENVIRONMENT', 'REFSYNC_EMAIL', 'REFSYNC_PASSWORD',
      'REFSYNC_API_KEY', 'REFSYNC_API_KEY_SCHEME', 'REFSYNC_CHARGE_CODE_VERSIONS', 'REFSYNC_CARRIERS', 'REFSYNC_LISTS',
      'REFSYNC_SCHEDULE', 'REFSYNC_TIMEZONE', 'REFSYNC_CA_FILE', 'REFSYNC_WEBHOOK_URL', 'REFSYNC_WEBHOOK_SECRET',
      'REFSYNC_WEBHOOK_FORMAT', 'REFSYNC_ALERT_ON', 'REFSYNC_MAX_REMOVED_FRACTION', 'REFSYNC_HTTP_PORT', 'REFSYNC_CONFIG', 'LOG_LEVEL',
      'REFSYNC_HTTP_HOST', 'REFSYNC_DASHBOARD_PASSWORD', 'REFSYNC_CONCURRENCY', 'REFSYNC_QUEUE_PREFIX', 'REFSYNC_SHUTDOWN_TIMEOUT_MS',
    ];
    for (const name of contract) expect(text, name).toMatch(new RegExp(`^#?${name}=`, 'm'));
  });
});
