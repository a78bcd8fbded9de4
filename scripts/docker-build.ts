// Builds the container image with its OCI labels taken from package.json (the Dockerfile's LABEL
// reads them as build arguments: a Dockerfile cannot read a file's contents into a label itself).
// Run: npm run docker:build [-- --print]   (--print only prints the docker build arguments)
//
// The source label is package.json's repository.url, else REFSYNC_SOURCE, else the git remote
// `origin` when it is an https URL (a clone of a local folder names no public source); with none
// of them the build stops rather than label the image with nothing.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');

interface PackageJson {
  version: string;
  license: string;
  repository?: string | { url?: string };
}

function gitOrigin(): string | undefined {
  try {
    return (
      execFileSync('git', ['remote', 'get-url', 'origin'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] })
        .toString()
        .trim() || undefined
    );
  } catch {
    return undefined;
  }
}

/** The `--build-arg` values of the Dockerfile's labels. */
export function imageBuildArgs(pkg: PackageJson, env: Record<string, string | undefined>, origin: () => string | undefined): Record<string, string> {
  const repository = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url;
  const remote = origin();
  const source = repository ?? env.REFSYNC_SOURCE ?? (remote?.startsWith('https://') ? remote : undefined);
  if (!source) throw new Error('docker-build: package.json has no repository.url and git has no https remote origin; set REFSYNC_SOURCE to the source URL');
  return { REFSYNC_VERSION: pkg.version, REFSYNC_LICENSE: pkg.license, REFSYNC_SOURCE: source.replace(/^git\+/, '') };
}

function main(): void {
  const pkg = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as PackageJson;
  let labels: Record<string, string>;
  try {
    labels = imageBuildArgs(pkg, process.env, gitOrigin);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exitCode = 2;
    return;
  }
  const args = Object.entries(labels).flatMap(([k, v]) => ['--build-arg', `${k}=${v}`]);
  if (process.argv.includes('--print')) {
    process.stdout.write(`${args.join(' ')}\n`);
  } else {
    const build = spawnSync('docker', ['build', ...args, '-t', `refsync:${pkg.version}`, root], { stdio: 'inherit' });
    process.exitCode = build.status ?? 1;
  }
}

if (import.meta.main) main();
