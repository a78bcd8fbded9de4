// The npm package runs where it is installed. Packed once from this checkout, the tarball goes into
// empty folders three ways: as a dependency of a project (`npx refsync`), globally by the machine's
// own npm and Node (often older than the code needs: the package's own Node 24 runs it then), and
// for production as the image installs it (no dev or optional dependencies, no install scripts,
// Node 24, NODE_ENV=production). Each runs `--version`, its own `sandbox`, and `migrate` + `sync`
// into a fresh database; the dependency install runs `demo` on the embedded database, the production
// one `worker`. Code that imports a devDependency at run time fails here: the production install
// has none of them.
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { dropTestDatabase } from '../helpers/db.ts';
import { testQueuePrefix } from '../queue/helpers.ts';
import {
  installAsDependency,
  installForProduction,
  installGlobally,
  machineNode,
  machinePath,
  packCheckout,
  removeTempDirs,
  repoRoot,
  run,
  type Started,
  start,
  tempDir,
  waitFor,
} from './installed.ts';

const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  version: string;
  dependencies: Record<string, string>;
  optionalDependencies: Record<string, string>;
};
const schemaVersion = JSON.parse(readFileSync(join(repoRoot, 'migrations/meta/_journal.json'), 'utf8')).entries.length as number;
const machineVersion = machineNode ? run(machineNode, ['-p', 'process.versions.node'], { cwd: repoRoot }).then((r) => r.stdout.trim()) : undefined;
if (!machineNode) console.warn('[release] the global install is skipped: no node on the PATH outside node_modules/.bin');

/** How one install runs `refsync ...args`: the command, its folder and PATH, and what it adds to the environment. */
interface Install {
  name: string;
  command(args: string[]): [string, string[]];
  cwd: string;
  path: string;
  env: Record<string, string>;
}

const installs: Record<'dependency' | 'global' | 'production', Install | undefined> = { dependency: undefined, global: undefined, production: undefined };
let tarball = '';
const databases: string[] = [];
const running: Started[] = [];

beforeAll(async () => {
  tarball = await packCheckout();
  const [project, globalBin, app] = await Promise.all([
    installAsDependency(tarball),
    machineNode ? installGlobally(tarball) : undefined,
    installForProduction(tarball),
  ]);
  // A user in a project: the machine's PATH; npx puts the project's node_modules/.bin first.
  installs.dependency = { name: 'dependency', command: (args) => ['npx', ['--no-install', 'refsync', ...args]], cwd: project, path: machinePath, env: {} };
  if (globalBin) installs.global = { name: 'global', command: (args) => [globalBin, args], cwd: tempDir('global-cwd'), path: machinePath, env: {} };
  // The image: Node 24 (this test's own) runs /app/bin/refsync.js from /app.
  installs.production = {
    name: 'production',
    command: (args) => [process.execPath, [join(app, 'bin/refsync.js'), ...args]],
    cwd: app,
    path: process.env.PATH ?? '',
    env: { NODE_ENV: 'production' },
  };
}, 900_000);

afterAll(async () => {
  for (const started of running) started.killAll();
  for (const name of databases) await dropTestDatabase(name);
  removeTempDirs();
});

function refsync(install: Install, args: string[], env: Record<string, string> = {}) {
  const [command, argv] = install.command(args);
  return run(command, argv, { cwd: install.cwd, path: install.path, env: { LOG_LEVEL: 'warn', ...install.env, ...env } });
}

function startRefsync(install: Install, args: string[], env: Record<string, string> = {}): Started {
  const [command, argv] = install.command(args);
  const started = start(command, argv, { cwd: install.cwd, path: install.path, env: { LOG_LEVEL: 'warn', ...install.env, ...env } });
  running.push(started);
  return started;
}

/** The install's own `refsync sandbox` on a free port; the settings that sync from it. */
async function sandboxFrom(install: Install): Promise<Record<string, string>> {
  const sandbox = startRefsync(install, ['sandbox', '--port', '0', '--cert-dir', tempDir('sandbox-ca')]);
  const [url, caFile] = await waitFor(sandbox, `${install.name}: refsync sandbox`, () => {
    const out = sandbox.output().stdout;
    const [url, caFile] = [/listening on (https:\/\/\S+)/.exec(out)?.[1], /CA certificate: (\S+)/.exec(out)?.[1]];
    return url && caFile ? [url, caFile] : undefined;
  });
  return {
    REFSYNC_BASE_URL: url,
    REFSYNC_CA_FILE: caFile,
    REFSYNC_EMAIL: 'machine@sandbox.test',
    REFSYNC_PASSWORD: 'sandbox-password',
    REFSYNC_ENVIRONMENT: 'sandbox',
    REFSYNC_LISTS: 'shipment_modes,accessorials',
  };
}

/**
 * A migrated fresh database, the install's own sandbox and `refsync worker` on them under a queue
 * prefix of its own; `body` gets the worker and the address it serves. The worker's processes and
 * its queue's keys (testQueuePrefix) are cleaned up after, however `body` ends.
 */
async function withWorker(install: Install, database: string, body: (worker: Started, served: string) => Promise<void>): Promise<void> {
  const sandbox = await sandboxFrom(install);
  const url = await freshDatabase(database);
  expect((await refsync(install, ['migrate'], { DATABASE_URL: url })).code).toBe(0);
  const prefix = testQueuePrefix();
  const worker = startRefsync(install, ['worker'], {
    DATABASE_URL: url,
    REDIS_URL: inject('redisUrl'),
    REFSYNC_QUEUE_PREFIX: prefix,
    REFSYNC_HTTP_PORT: '0',
    ...sandbox,
  });
  try {
    const served = await waitFor(worker, `${install.name}: refsync worker`, () => /serving (http:\/\/\S+)/.exec(worker.output().stdout)?.[1]);
    await body(worker, served);
  } finally {
    worker.killAll();
  }
}

/** An empty database, as a new user's: never migrated, nothing of refsync's in it. */
async function freshDatabase(prefix: string): Promise<string> {
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  const server = inject('databaseServerUrl');
  await query(server, `create database ${name}`);
  databases.push(name);
  const url = new URL(server);
  url.pathname = `/${name}`;
  return url.toString();
}

async function query<T>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}

describe('the packed tarball', () => {
  it('holds bin/, the compiled dist/, migrations/, the shrinkwrap, README, CHANGELOG and LICENSE; no sources, tests, .env, certificates or bench data', async () => {
    const listed = await run('tar', ['-tzf', tarball], { cwd: repoRoot });
    expect(listed.code).toBe(0);
    const files = listed.stdout
      .split('\n')
      .filter(Boolean)
      .map((f) => f.replace(/^package\//, ''));
    const paths = ['bin/refsync.js', 'dist/cli/main.js', 'dist/server/status-page.css', 'dist/server/favicon.svg', 'migrations/meta/_journal.json'];
    for (const path of [...paths, 'npm-shrinkwrap.json', 'README.md', 'CHANGELOG.md', 'LICENSE', 'package.json']) expect(files, path).toContain(path);
    const forbidden = files.filter(
      (f) =>
        /^(src|test|bench|\.ci|\.refsync|deploy|docs|scripts)\//.test(f) ||
        /(^|\/)\.env/.test(f) ||
        /\.(pem|key|crt|p12|pfx|ts)$/.test(f) ||
        f === 'package-lock.json',
    );
    expect(forbidden).toEqual([]);
  });

  it('passes `npm publish --dry-run`', async () => {
    // Offline: what is checked is the tarball and its manifest. The registry lookup a dry run makes
    // otherwise is not, and with the registry slow or out of reach it retried past the test's minute.
    const res = await run('npm', ['publish', '--dry-run', '--offline', '--ignore-scripts', tarball], { cwd: tempDir('publish'), inherit: true });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain(`+ refsync@${pkg.version}`);
  });
});

const each = (names: Array<keyof typeof installs>) => names.map((name) => ({ name }));

describe.each(each(['dependency', 'global', 'production']))('installed as $name', ({ name }) => {
  const install = () => installs[name]!;
  const skip = name === 'global' && !machineNode;

  it.skipIf(skip)('--version names the release and its schema version', async () => {
    const res = await refsync(install(), ['--version']);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(new RegExp(`^refsync ${pkg.version.replaceAll('.', '\\.')} \\(schema version ${schemaVersion}: \\w+\\)\\n$`));
  });

  it.skipIf(skip)('migrates a fresh database and syncs the lists its own sandbox serves', async () => {
    const sandbox = await sandboxFrom(install());
    const url = await freshDatabase(`refsync_release_${name}`);
    const migrated = await refsync(install(), ['migrate'], { DATABASE_URL: url });
    expect(migrated.stderr).toBe('');
    expect(migrated.code).toBe(0);
    expect(migrated.stdout).toMatch(new RegExp(`^migrations applied: ${schemaVersion} `));
    const synced = await refsync(install(), ['sync'], { DATABASE_URL: url, ...sandbox });
    expect(synced.code, synced.stderr).toBe(0);
    const snapshots = await query<{ list_key: string; status: string; entry_count: number }>(
      url,
      'select list_key, status, entry_count from refdata.snapshots order by list_key',
    );
    expect(snapshots.map((s) => [s.list_key, s.status])).toEqual([
      ['accessorials', 'ok'],
      ['shipment_modes', 'ok'],
    ]);
    const entries = await query<{ list_key: string; n: number }>(url, 'select list_key, count(*)::int as n from refdata.entries group by 1 order by 1');
    expect(entries.map((e) => [e.list_key, e.n])).toEqual(snapshots.map((s) => [s.list_key, s.entry_count]));
    for (const e of entries) expect(e.n).toBeGreaterThan(0);
  });
});

describe('installed as a dependency', () => {
  it('`npx refsync demo` runs the tour on the embedded database, and `status` reads what it wrote', async () => {
    const demo = await refsync(installs.dependency!, ['demo'], { DATABASE_URL: '' });
    expect(demo.code, demo.stderr).toBe(0);
    expect(demo.stdout).toContain('What the webhook receiver got');
    expect(demo.stdout).toMatch(/refdata\.removed +accessorials .* LGDEL +verified/);
    const status = await refsync(installs.dependency!, ['status'], { DATABASE_URL: '' });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^accessorials\b.*\bok\b/m);
  });

  it("keeps the compile cache in the package's own node_modules", () => {
    const cache = join(installs.dependency!.cwd, 'node_modules/refsync/node_modules/.cache/refsync-compile');
    expect(existsSync(cache) && readdirSync(cache).length).toBeGreaterThan(0);
  });
});

describe('installed for production, as the image holds it', () => {
  it('imports nothing at run time but its dependencies (optional ones are loaded only where present)', () => {
    const app = installs.production!.cwd;
    const allowed = new Set([...Object.keys(pkg.dependencies), ...Object.keys(pkg.optionalDependencies), ...builtinModules]);
    const imported = new Set<string>();
    for (const file of readdirSync(join(app, 'dist'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.js'))) {
      const text = readFileSync(join(app, 'dist', file), 'utf8');
      for (const m of text.matchAll(/(?:^import [^'"]*|^export [^'"]* from |import\()\s*'([^'.][^']*)'/gm)) {
        const spec = m[1]!.replace(/^node:/, '');
        imported.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
      }
    }
    expect(imported.size).toBeGreaterThan(10);
    expect([...imported].filter((name) => !allowed.has(name))).toEqual([]);
    expect(existsSync(join(app, 'node_modules/typescript'))).toBe(false);
    expect(existsSync(join(app, 'src'))).toBe(false);
  });

  it("keeps the compile cache in the user's cache folder where the package's own cannot be written", async () => {
    const install = installs.production!;
    // node_modules/.cache as a file: no folder can be made under it, as under a root-owned /app.
    const blocked = join(install.cwd, 'node_modules/.cache');
    rmSync(blocked, { recursive: true, force: true });
    writeFileSync(blocked, '');
    const cacheHome = tempDir('cache-home');
    const res = await refsync(install, ['--version'], { XDG_CACHE_HOME: cacheHome });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toBe('');
    expect(readdirSync(join(cacheHome, 'refsync/compile')).length).toBeGreaterThan(0);
    rmSync(blocked);
  });

  it('`worker` serves /readyz 200 with its own queue prefix, and stops on SIGTERM', async () => {
    await withWorker(installs.production!, 'refsync_release_worker', async (worker, served) => {
      let ready = 0;
      for (let i = 0; i < 100 && ready !== 200; i++) {
        ready = (await fetch(`${served}/readyz`)).status;
        if (ready !== 200) await new Promise((r) => setTimeout(r, 200));
      }
      expect(ready).toBe(200);
      worker.child.kill('SIGTERM');
      expect(await worker.exited, worker.output().stderr).toBe(0);
    });
  });
});

describe.skipIf(!machineNode)("on the machine's own Node", () => {
  const tooOld = async () => {
    const [major, minor] = (await machineVersion!).split('.').map(Number) as [number, number];
    return major < 22 || (major === 22 && minor < 19);
  };

  it('a package installed without its optional dependencies (so without its Node 24) refuses older Node in one line', async (ctx) => {
    if (!(await tooOld())) ctx.skip();
    const res = await run(machineNode!, [join(installs.production!.cwd, 'bin/refsync.js'), '--version'], { cwd: installs.production!.cwd, path: machinePath });
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(
      /^refsync: needs Node\.js 22\.19 or newer \(this is v[\d.]+\); install Node\.js 22\.19 or newer, or install refsync again with its optional dependencies \(`npm install -g refsync`, no --omit=optional\), which bring Node 24 for linux-x64 and run on it\n$/,
    );
  });

  it('on a platform npm has no Node 24 package for, it says to install Node itself and names the platforms it has', async (ctx) => {
    if (!(await tooOld())) ctx.skip();
    const fake = `data:text/javascript,Object.defineProperty(process, 'arch', { value: 'ppc64' })`;
    const [bin] = installs.global!.command([]);
    const res = await run(machineNode!, ['--import', fake, bin, '--version'], { cwd: installs.global!.cwd, path: machinePath });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(
      /^refsync: needs Node\.js 22\.19 or newer \(this is v[\d.]+\); npm has no Node 24 package for linux-ppc64 \(refsync brings one for darwin-x64, linux-arm64, linux-x64, win-x64\): install Node\.js 22\.19 or newer yourself and run again\n$/,
    );
  });

  it('a global worker run by its own Node 24 stops on the SIGTERM sent to the command, and ends as the worker ends', async () => {
    await withWorker(installs.global!, 'refsync_release_global_worker', async (worker) => {
      worker.child.kill('SIGTERM');
      expect(await worker.exited, worker.output().stderr).toBe(0);
      expect(worker.output().stderr).not.toMatch(/second signal/);
    });
  });
});
