import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { listKeys } from '../../src/catalog/list-keys.ts';
import { targetsFor } from '../../src/catalog/catalog.ts';
import { ConfigError, loadConfig } from '../../src/config/index.ts';
import { knownSettings, unknownSettingWarnings } from '../../src/config/known-settings.ts';
import { queueKeyPrefix } from '../../src/queue/redis/names.ts';
import { nodeOptionsFromUrl } from '../../src/queue/redis/redis-cluster.ts';
import { configError } from './config-error.ts';
import { testTempDir } from '../helpers/temp-dir.ts';

const dir = testTempDir('refsync-config');
const file = (name: string, contents: string) => {
  const path = join(dir, name);
  writeFileSync(path, contents);
  return path;
};

const base = { REFSYNC_BASE_URL: 'https://api.vendor.example', REFSYNC_EMAIL: 'machine@acme.example', REFSYNC_PASSWORD: 'pw-secret-1' };

describe('configuration from the environment', () => {
  it('applies the contract defaults', () => {
    const [source] = loadConfig(base).sources;
    expect(source).toMatchObject({
      name: 'production',
      environment: 'production',
      baseUrl: 'https://api.vendor.example',
      apiKeyScheme: 'apikey',
      chargeCodeVersions: ['unpinned'],
      carriers: ['fedex', 'ups', 'usps', 'dhl'],
      schedule: '0 * * * *',
      timezone: 'UTC',
      maxRemovedFraction: 0.5,
      alertOn: ['added', 'nonconforming', 'held', 'failed'],
    });
    expect(source!.lists).toEqual([...listKeys]);
    const config = loadConfig(base);
    expect(config).toMatchObject({ redisUrl: 'redis://127.0.0.1:6379', httpPort: 9464, httpHost: '127.0.0.1', concurrency: 4 });
    expect(config.databaseUrl).toBeUndefined();
  });

  it('takes REFSYNC_LISTEN_DATABASE_URL as a postgres URL or off, and names it without echoing a bad value', () => {
    expect(loadConfig({ ...base, REFSYNC_LISTEN_DATABASE_URL: 'postgres://u:pw@db:5432/refsync' }).listenDatabaseUrl).toBe('postgres://u:pw@db:5432/refsync');
    expect(loadConfig({ ...base, REFSYNC_LISTEN_DATABASE_URL: 'off' }).listenDatabaseUrl).toBe('off');
    expect(loadConfig(base).listenDatabaseUrl).toBeUndefined();
    const message = configError({ ...base, REFSYNC_LISTEN_DATABASE_URL: 'mysql://u:secret-pw@db/x' });
    expect(message).toMatch(/^REFSYNC_LISTEN_DATABASE_URL: must be a postgres:\/\/ URL/);
    expect(message).not.toContain('secret-pw');
  });

  it('expands carriers and charge-code versions into targets', () => {
    const [source] = loadConfig({
      ...base,
      REFSYNC_CHARGE_CODE_VERSIONS: '2024-06-11,unpinned',
      REFSYNC_CARRIERS: 'fedex,ups',
      REFSYNC_LISTS: 'charge_codes,carrier_package_types',
    }).sources;
    const targets = targetsFor(source!).map((t) => [t.list.key, t.variant, t.path, t.serviceVersion]);
    expect(targets).toEqual([
      ['charge_codes', '2024-06-11', '/reference-data/charge-codes/', '2024-06-11'],
      ['charge_codes', 'unpinned', '/reference-data/charge-codes/', undefined],
      ['carrier_package_types', 'fedex', '/quoting/fedex/package-types/', undefined],
      ['carrier_package_types', 'ups', '/quoting/ups/package-types/', undefined],
    ]);
  });

  it('names the setting and the bad value in one line, never a secret', () => {
    expect(configError({ ...base, REFSYNC_BASE_URL: '' })).toBe('REFSYNC_BASE_URL: is required');
    expect(configError({ ...base, REFSYNC_BASE_URL: 'http://api.vendor.example' })).toMatch(
      /^REFSYNC_BASE_URL: 'http:\/\/api.vendor.example' — plain http:\/\/ is refused/,
    );
    expect(configError({ ...base, REFSYNC_BASE_URL: 'https://api.vendor.example/v2' })).toMatch(/^REFSYNC_BASE_URL: .*no path/);
    expect(configError({ ...base, REFSYNC_LISTS: 'accessorials,bogus' })).toMatch(/^REFSYNC_LISTS\[1\]: 'bogus' — must be one of: accessorials, /);
    expect(configError({ ...base, REFSYNC_LISTS: 'charge_code' })).toMatch(
      /^REFSYNC_LISTS\[0\]: 'charge_code' — did you mean charge_codes\? must be one of: accessorials, /,
    );
    expect(configError({ ...base, REFSYNC_CHARGE_CODE_VERSIONS: '2024-02-30' })).toMatch(/^REFSYNC_CHARGE_CODE_VERSIONS\[0\]: '2024-02-30'/);
    expect(configError({ ...base, REFSYNC_TIMEZONE: 'Mars/Olympus' })).toMatch(/^REFSYNC_TIMEZONE: 'Mars\/Olympus' — is not a known IANA time zone/);
    expect(configError({ ...base, REFSYNC_IMPACT_TIMEOUT_S: '0' })).toBe("REFSYNC_IMPACT_TIMEOUT_S: '0' — must be more than 0");
    expect(loadConfig({ ...base, REFSYNC_IMPACT_TIMEOUT_S: '2.5' }).sources[0]!.impactTimeoutS).toBe(2.5);
    expect(configError({ ...base, REFSYNC_SCHEDULE: 'hourly' })).toMatch(/^REFSYNC_SCHEDULE: .*cron/);
    expect(configError({ ...base, REFSYNC_MAX_REMOVED_FRACTION: '2' })).toMatch(/^REFSYNC_MAX_REMOVED_FRACTION:/);
    expect(configError({ ...base, REFSYNC_HTTP_PORT: '99999' })).toMatch(/^REFSYNC_HTTP_PORT: expected a whole number/);
    expect(configError({ REFSYNC_BASE_URL: 'https://api.vendor.example' })).toMatch(/credentials are missing/);
    expect(configError({ ...base, REFSYNC_WEBHOOK_URL: 'https://hooks.example/x', REFSYNC_WEBHOOK_SECRET: 'not-a-whsec' })).toMatch(
      /^REFSYNC_WEBHOOK_SECRET: must be a Standard Webhooks secret, .*; make one with `refsync webhook-secret`$/,
    );
    expect(configError({ ...base, REFSYNC_WEBHOOK_URL: 'ftp://hooks.example/x' })).toBe(
      "REFSYNC_WEBHOOK_URL: 'ftp://hooks.example/x' — must be an https:// URL (http:// only with REFSYNC_WEBHOOK_ALLOW_PRIVATE=true)",
    );
    expect(configError({ ...base, REFSYNC_WEBHOOK_URL: 'http://127.0.0.1:9553/hook' })).toMatch(
      /^REFSYNC_WEBHOOK_URL: must be https:\/\/; http:\/\/ is allowed only with REFSYNC_WEBHOOK_ALLOW_PRIVATE=true/,
    );
    expect(loadConfig({ ...base, REFSYNC_WEBHOOK_URL: 'http://127.0.0.1:9553/hook', REFSYNC_WEBHOOK_ALLOW_PRIVATE: 'true' }).sources[0]!.webhook).toMatchObject(
      {
        allowPrivate: true,
      },
    );
    const withSecret = configError({ ...base, REFSYNC_API_KEY_SCHEME: 'pw-secret-1' });
    expect(withSecret).toMatch(/^REFSYNC_API_KEY_SCHEME:/);
    expect(configError({ ...base, REFSYNC_PASSWORD: '', REFSYNC_PASSWORD_FILE: '' }).includes('pw-secret-1')).toBe(false);
  });

  it('reads secrets from NAME_FILE, refuses both, and refuses NODE_TLS_REJECT_UNAUTHORIZED=0', () => {
    const passwordFile = file('password', 'from-file\n');
    const [source] = loadConfig({ ...base, REFSYNC_PASSWORD: '', REFSYNC_PASSWORD_FILE: passwordFile }).sources;
    expect(source!.password).toBe('from-file');
    expect(configError({ ...base, REFSYNC_PASSWORD_FILE: passwordFile })).toBe('REFSYNC_PASSWORD and REFSYNC_PASSWORD_FILE are both set; set only one');
    expect(configError({ ...base, REFSYNC_PASSWORD: '', REFSYNC_PASSWORD_FILE: join(dir, 'missing') })).toMatch(
      /^REFSYNC_PASSWORD_FILE: cannot read .* \(ENOENT\)$/,
    );
    expect(loadConfig({ ...base, DATABASE_URL: '', DATABASE_URL_FILE: file('db', 'postgres://u:p@db/refsync\n') }).databaseUrl).toBe(
      'postgres://u:p@db/refsync',
    );
    expect(configError({ ...base, NODE_TLS_REJECT_UNAUTHORIZED: '0' })).toMatch(/^NODE_TLS_REJECT_UNAUTHORIZED=0 is refused/);
  });

  it('reads the CA file, and says so when it holds no certificate or one that does not parse', () => {
    expect(configError({ ...base, REFSYNC_CA_FILE: file('not-a-ca.pem', 'hello') })).toMatch(/^REFSYNC_CA_FILE: .* holds no PEM certificate$/);
    // Node's TLS context would skip a damaged certificate silently: refused here instead of failing every request.
    const damaged = file('damaged-ca.pem', '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    expect(configError({ ...base, REFSYNC_CA_FILE: damaged })).toMatch(/^REFSYNC_CA_FILE: .* holds a certificate that does not parse \(ERR_OSSL_[A-Z0-9_]+\)$/);
  });
});

describe('several sources from REFSYNC_CONFIG', () => {
  it('takes each source with its own settings, the environment as defaults, and secrets from files', () => {
    const config = loadConfig({
      REFSYNC_SCHEDULE: '*/30 * * * *',
      REFSYNC_CONFIG: file(
        'sources.json',
        JSON.stringify({
          sources: [
            {
              name: 'prod-acme',
              environment: 'production-acme',
              baseUrl: 'https://api.vendor.example',
              email: 'a@acme.example',
              passwordFile: file('acme', 'acme-pw'),
            },
            {
              environment: 'sandbox',
              baseUrl: 'https://sandbox-api.vendor.example:8443',
              apiKey: 'sandbox-key',
              lists: ['charge_codes'],
              chargeCodeVersions: ['2024-06-11'],
            },
          ],
          catalog: { charge_codes: { basePath: '' } },
        }),
      ),
    });
    expect(config.sources.map((s) => [s.name, s.environment, s.schedule, s.lists.length, s.password ?? s.apiKey])).toEqual([
      ['prod-acme', 'production-acme', '*/30 * * * *', listKeys.length, 'acme-pw'],
      ['sandbox', 'sandbox', '*/30 * * * *', 1, 'sandbox-key'],
    ]);
  });

  it('limits each source to its share of the job slots: 2 by default beside other sources, none alone, or as set', () => {
    const sources = (extra: Record<string, unknown> = {}) => [
      { environment: 'a', baseUrl: 'https://x.example', apiKey: 'k', ...extra },
      { environment: 'b', baseUrl: 'https://y.example', apiKey: 'k' },
    ];
    const jobs = (env: Record<string, string>) => loadConfig(env).sources.map((s) => s.maxConcurrentJobs);
    expect(jobs({ REFSYNC_CONFIG: file(`jobs-${Math.random()}.json`, JSON.stringify({ sources: sources() })) })).toEqual([2, 2]);
    expect(jobs({ REFSYNC_CONFIG: file(`jobs-${Math.random()}.json`, JSON.stringify({ sources: sources({ maxConcurrentJobs: 5 }) })) })).toEqual([5, 2]);
    expect(jobs({ REFSYNC_SOURCE_MAX_JOBS: '3', REFSYNC_CONFIG: file(`jobs-${Math.random()}.json`, JSON.stringify({ sources: sources() })) })).toEqual([3, 3]);
    expect(jobs(base)).toEqual([undefined]);
    expect(jobs({ ...base, REFSYNC_SOURCE_MAX_JOBS: '1' })).toEqual([1]);
    expect(configError({ ...base, REFSYNC_SOURCE_MAX_JOBS: '0' })).toMatch(/^REFSYNC_SOURCE_MAX_JOBS: '0' — /);
    expect(configError({ REFSYNC_CONFIG: file(`jobs-${Math.random()}.json`, JSON.stringify({ sources: sources({ maxConcurrentJobs: 1.5 }) })) })).toMatch(
      /^REFSYNC_CONFIG sources\[0\] \(a\)\.maxConcurrentJobs: '1\.5' — must be a whole number/,
    );
  });

  it('names the source and the field of an error', () => {
    const bad = (sources: unknown[]) => configError({ REFSYNC_CONFIG: file(`bad-${Math.random()}.json`, JSON.stringify({ sources })) });
    expect(bad([{ name: 'acme', environment: 'prod-acme', baseUrl: 'http://x.example', apiKey: 'k' }])).toMatch(
      /^REFSYNC_CONFIG sources\[0\] \(acme\)\.baseUrl: .*plain http/,
    );
    expect(bad([{ environment: 'a', baseUrl: 'https://x.example', apiKey: 'k', colour: 'blue' }])).toBe(
      'REFSYNC_CONFIG sources[0] (a).colour: is not a setting refsync knows',
    );
    expect(
      bad([
        { environment: 'same', baseUrl: 'https://x.example', apiKey: 'k' },
        { name: 'other', environment: 'same', baseUrl: 'https://y.example', apiKey: 'k' },
      ]),
    ).toBe("REFSYNC_CONFIG: two sources share the environment 'same'; each must be unique");
    expect(bad([{ environment: 'a', baseUrl: 'https://x.example', apiKey: 'k', apiKeyFile: file('k', 'k2') }])).toBe(
      'REFSYNC_CONFIG sources[0] (a).apiKey and REFSYNC_CONFIG sources[0] (a).apiKeyFile are both set; set only one',
    );
    expect(bad([{ environment: 'a', baseUrl: 'https://x.example', apiKeyFile: join(dir, 'missing') }])).toMatch(
      /^REFSYNC_CONFIG sources\[0\] \(a\)\.apiKeyFile: cannot read/,
    );
    expect(configError({ REFSYNC_CONFIG: file('broken.json', '{"sources": [') })).toMatch(/^REFSYNC_CONFIG: '.*broken.json' is not valid JSON/);
  });
});

describe('a REFSYNC_CONFIG file with only catalog overrides', () => {
  it('applies them to the one source the environment defines', () => {
    const base = { REFSYNC_BASE_URL: 'https://api.vendor.example', REFSYNC_API_KEY: 'k-0001' };
    const config = loadConfig({
      ...base,
      REFSYNC_CONFIG: file('catalog-only.json', JSON.stringify({ catalog: { hazmat: { basePath: '', path: '/v3/hazmat/' } } })),
    });
    expect(config.sources).toHaveLength(1);
    expect(targetsFor(config.sources[0]!, ['hazmat']).map((t) => [t.list.basePath, t.path])).toEqual([['', '/v3/hazmat/']]);
  });
});

describe('settings users get wrong first', () => {
  it('refuses an unknown LOG_LEVEL, naming it and the levels', () => {
    expect(configError({ ...base, LOG_LEVEL: 'verbose' })).toBe(
      "LOG_LEVEL: 'verbose' is not a log level; one of: fatal, error, warn, info, debug, trace, silent",
    );
    expect(loadConfig({ ...base, LOG_LEVEL: 'DEBUG' }).logLevel).toBe('debug');
  });

  it('checks REFSYNC_SCHEDULE with the cron parser BullMQ uses, in REFSYNC_TIMEZONE', () => {
    expect(configError({ ...base, REFSYNC_SCHEDULE: '99 99 * * *' })).toBe(
      "REFSYNC_SCHEDULE: '99 99 * * *' — Constraint error, got value 99 expected range 0-59 (in time zone UTC)",
    );
    expect(configError({ ...base, REFSYNC_SCHEDULE: '0 0 31 2 *', REFSYNC_TIMEZONE: 'Europe/Paris' })).toMatch(
      /^REFSYNC_SCHEDULE: '0 0 31 2 \*' — .*\(in time zone Europe\/Paris\)$/,
    );
    expect(loadConfig({ ...base, REFSYNC_SCHEDULE: '30 6 * * MON-FRI', REFSYNC_TIMEZONE: 'America/Chicago' }).sources[0]!.schedule).toBe('30 6 * * MON-FRI');
  });

  it('turns zod texts into sentences about the setting', () => {
    expect(configError({ ...base, REFSYNC_MAX_REMOVED_FRACTION: '2' })).toBe("REFSYNC_MAX_REMOVED_FRACTION: '2' — must be at most 1");
    expect(configError({ ...base, REFSYNC_MAX_REMOVED_FRACTION: '-1' })).toBe("REFSYNC_MAX_REMOVED_FRACTION: '-1' — must be at least 0");
    expect(configError({ ...base, REFSYNC_MAX_REMOVED_FRACTION: 'half' })).toBe("REFSYNC_MAX_REMOVED_FRACTION: 'half' — must be a number");
    expect(configError({ ...base, REFSYNC_API_KEY_SCHEME: 'token' })).toBe("REFSYNC_API_KEY_SCHEME: 'token' — must be one of: apikey, bearer, basic");
    expect(configError({ ...base, REFSYNC_ENVIRONMENT: 'e'.repeat(65) })).toMatch(/^REFSYNC_ENVIRONMENT: 'e+' — must be at most 64 characters$/);
    expect(configError({ ...base, REFSYNC_WEBHOOK_URL: 'not a url' })).toBe(
      "REFSYNC_WEBHOOK_URL: 'not a url' — must be an https:// URL (http:// only with REFSYNC_WEBHOOK_ALLOW_PRIVATE=true)",
    );
    expect(configError({ ...base, REFSYNC_CARRIERS: ' , ' })).toBe("REFSYNC_CARRIERS: ' , ' — must name at least one");
  });

  it('says where REFSYNC_CONFIG is not JSON without quoting it across lines', () => {
    const message = configError({ REFSYNC_CONFIG: file('token.json', '{"sources": [\n  { "apiKey": "s3cret-value" }, oops\n]}') });
    expect(message).toMatch(/^REFSYNC_CONFIG: '.*token.json' is not valid JSON \(Unexpected token 'o'\)$/);
    expect(message).not.toContain('s3cret');
    expect(configError({ REFSYNC_CONFIG: file('comma.json', '{"sources": [{"a": 1,}]}') })).toMatch(
      /is not valid JSON \(Expected double-quoted property name in JSON at position 21 \(line 1 column 22\)\)$/,
    );
  });
});

describe('the worker memory budget setting', () => {
  it('is absent unless set, taken in MiB, and refused below 64 with the setting named', () => {
    expect(loadConfig(base).memoryBudgetMb).toBeUndefined();
    expect(loadConfig({ ...base, REFSYNC_MEMORY_BUDGET_MB: '768' }).memoryBudgetMb).toBe(768);
    expect(configError({ ...base, REFSYNC_MEMORY_BUDGET_MB: '32' })).toBe("REFSYNC_MEMORY_BUDGET_MB: expected a whole number from 64 to 1048576, got '32'");
  });
});

describe('unknown REFSYNC_* variables', () => {
  it('are each named with the closest known setting', () => {
    expect(unknownSettingWarnings({ ...base, REFSYNC_LIST: 'charge_codes', REFSYNC_WEBHOK_URL: 'x', REFSYNC_ZZZZZZZZZZZZZZZZZZZZ: '1', OTHER: '1' })).toEqual([
      'REFSYNC_LIST is not a setting refsync knows; did you mean REFSYNC_LISTS?',
      'REFSYNC_WEBHOK_URL is not a setting refsync knows; did you mean REFSYNC_WEBHOOK_URL?',
      'REFSYNC_ZZZZZZZZZZZZZZZZZZZZ is not a setting refsync knows',
    ]);
  });

  it('include every REFSYNC_* name the source reads', () => {
    const read = new Set<string>();
    const srcDir = fileURLToPath(new URL('../../src', import.meta.url));
    for (const path of readdirSync(srcDir, { recursive: true, encoding: 'utf8' })) {
      if (!path.endsWith('.ts')) continue;
      for (const name of readFileSync(join(srcDir, path), 'utf8').match(/REFSYNC_[A-Z0-9_]*[A-Z0-9]\b/g) ?? []) read.add(name);
    }
    expect(read.size).toBeGreaterThan(20);
    expect([...read].filter((name) => !knownSettings.includes(name))).toEqual([]);
  });
});

describe('Redis Cluster settings', () => {
  it('REDIS_CLUSTER_NODES gives the seed nodes; with it the queue prefix is hash-tagged, without it left as it is', () => {
    const config = loadConfig({ ...base, REDIS_CLUSTER_NODES: 'r1:6379, r2:7000' });
    expect(config.redisCluster).toEqual({
      nodes: [
        { host: 'r1', port: 6379 },
        { host: 'r2', port: 7000 },
      ],
    });
    expect(queueKeyPrefix(config, 'refsync')).toBe('{refsync}');
    expect(queueKeyPrefix(config, '{team-a}:refsync')).toBe('{team-a}:refsync');
    expect(queueKeyPrefix(loadConfig(base), 'refsync')).toBe('refsync');
  });

  it('refuses nodes without a port, and a cluster together with Sentinel, naming the setting', () => {
    expect(() => loadConfig({ ...base, REDIS_CLUSTER_NODES: 'r1' })).toThrow(
      new ConfigError('REDIS_CLUSTER_NODES: expected host:port of each cluster node, comma-separated (e.g. r1:6379,r2:6379)'),
    );
    expect(() => loadConfig({ ...base, REDIS_CLUSTER_NODES: 'r1:6379', REDIS_SENTINELS: 's1:26379' })).toThrow(
      /^REDIS_CLUSTER_NODES: is set together with REDIS_SENTINELS/,
    );
  });

  it('takes only credentials and TLS from REDIS_URL, and refuses a database other than 0', () => {
    const reach = { redisCaPem: 'PEM', redisCluster: { nodes: [{ host: 'r1', port: 6379 }] } };
    expect(nodeOptionsFromUrl('rediss://app:p%40ss@ignored:6380', reach)).toEqual({ username: 'app', password: 'p@ss', tls: { ca: 'PEM' } });
    expect(nodeOptionsFromUrl('redis://:secret@ignored/0', reach)).toEqual({ password: 'secret' });
    expect(() => nodeOptionsFromUrl('redis://ignored/2', reach)).toThrow(
      /^REDIS_URL: names database 2, but a Redis Cluster \(REDIS_CLUSTER_NODES\) has only database 0$/,
    );
  });
});
