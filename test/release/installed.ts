// refsync installed from its npm package, as users install it: the project packed once (`npm pack`,
// whose prepack compiles dist/), then the tarball installed into empty folders. Commands run in
// child processes with only PATH, HOME and the variables given, as a user's shell would.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** The machine's own PATH: without any node_modules/.bin (the checkout's Node 24, npx's additions). */
export const machinePath = (process.env.PATH ?? '')
  .split(delimiter)
  .filter((dir) => dir && !/[\\/]node_modules[\\/]\.bin$/.test(dir))
  .join(delimiter);

/** The first `node` on the machine's PATH (the system's, often older than 24), or undefined. */
export const machineNode = machinePath
  .split(delimiter)
  .map((dir) => join(dir, 'node'))
  .find((path) => existsSync(path));

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface Started {
  child: ChildProcess;
  /** SIGKILL to the process and everything it started (npx's shell, the relaunched Node 24). */
  killAll(): void;
  output(): { stdout: string; stderr: string };
  exited: Promise<number | null>;
}

export interface StartOptions {
  cwd: string;
  env?: Record<string, string | undefined>;
  /** PATH, when not this process's. */
  path?: string;
  /** The whole environment of this process (npm's: the machine's CA and proxy settings reach the registry), not only PATH and HOME. */
  inherit?: boolean;
}

/** Starts a command with PATH, HOME and `env` (npm's own npm_* variables of a test run stay out). */
export function start(command: string, args: string[], options: StartOptions): Started {
  const env: Record<string, string> = {};
  const base = options.inherit ? Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k))) : {};
  for (const [k, v] of Object.entries({ ...base, PATH: options.path ?? process.env.PATH, HOME: process.env.HOME, ...options.env }))
    if (v !== undefined) env[k] = v;
  // A process group of its own, so that killAll reaches what npx or the relauncher started too.
  const child = spawn(command, args, { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => {
    child.on('error', (err) => {
      stderr += `${err.message}\n`;
      resolve(null);
    });
    child.on('close', (code) => resolve(code));
  });
  const killAll = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // Already gone.
    }
  };
  return { child, killAll, output: () => ({ stdout, stderr }), exited };
}

/** Runs a command to its end (SIGKILL after `timeoutMs`). */
export async function run(command: string, args: string[], options: StartOptions & { timeoutMs?: number }): Promise<Run> {
  const started = start(command, args, options);
  const timer = setTimeout(() => started.killAll(), options.timeoutMs ?? 120_000);
  const code = await started.exited;
  clearTimeout(timer);
  return { code, ...started.output() };
}

/** Waits until `find` returns something, or the process ends or the time runs out (an error naming `what`). */
export async function waitFor<T>(started: Started, what: string, find: () => T | undefined, ms = 60_000): Promise<T> {
  let ended = false;
  void started.exited.then(() => (ended = true));
  const until = Date.now() + ms;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (ended || Date.now() > until) throw new Error(`${what}: ${ended ? 'the process ended' : 'timed out'}; stderr: ${started.output().stderr.slice(0, 800)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const made: string[] = [];

/** A new folder under the system's temp folder; removeTempDirs() removes it (an install holds hundreds of MB). */
export function tempDir(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `refsync-release-${name}-`));
  made.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** `npm pack` of the checkout into a folder of its own; the tarball's path. */
export async function packCheckout(): Promise<string> {
  const out = tempDir('pack');
  const packed = await run('npm', ['pack', '--pack-destination', out, '--loglevel', 'warn'], { cwd: repoRoot, inherit: true, timeoutMs: 180_000 });
  if (packed.code !== 0) throw new Error(`npm pack failed (exit ${packed.code}): ${packed.stderr}`);
  const tarball = readdirSync(out).find((f) => f.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack wrote no tarball in ${out}: ${packed.stdout}`);
  return join(out, tarball);
}

/** npm, quietly and from its cache where it can (the registry answers for anything missing). */
const npmQuiet = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel', 'error'];

/** As a dependency of an empty project: `npm install <tarball>`; the project folder. */
export async function installAsDependency(tarball: string): Promise<string> {
  const dir = tempDir('dependency');
  const res = await run('npm', ['install', ...npmQuiet, tarball], { cwd: dir, inherit: true, timeoutMs: 300_000 });
  if (res.code !== 0) throw new Error(`npm install ${tarball} failed (exit ${res.code}): ${res.stderr}`);
  return dir;
}

/** Globally, by the machine's own npm and Node, into a prefix of its own; the `refsync` command's path. */
export async function installGlobally(tarball: string): Promise<string> {
  const prefix = tempDir('global');
  const res = await run('npm', ['install', '-g', '--prefix', prefix, ...npmQuiet, tarball], {
    cwd: prefix,
    path: machinePath,
    inherit: true,
    timeoutMs: 300_000,
  });
  if (res.code !== 0) throw new Error(`npm install -g ${tarball} failed (exit ${res.code}): ${res.stderr}`);
  return join(prefix, 'bin', 'refsync');
}

/** For production, by the image's own script (scripts/install-package.sh); the folder, the image's /app. */
export async function installForProduction(tarball: string): Promise<string> {
  const dir = join(tempDir('production'), 'app');
  const res = await run('sh', [join(repoRoot, 'scripts/install-package.sh'), tarball, dir], { cwd: repoRoot, inherit: true, timeoutMs: 300_000 });
  if (res.code !== 0) throw new Error(`scripts/install-package.sh failed (exit ${res.code}): ${res.stderr}`);
  return dir;
}
