// bin/refsync.js started by a Node older than 24 (the machine's own, say /usr/bin/node) cannot load
// the checkout's TypeScript: it runs the same command on the Node 24 that `npm ci` installed (the
// node-<platform> optional dependency), and where there is none, says why and what to do in one
// line, exit 2. Skipped where no older node is installed. The npm package's side of this is tried
// from the packed tarball in test/release/install.test.ts.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { packageVersion } from '../../src/util/package-version.ts';
import { repoRoot } from '../queue/helpers.ts';

const oldNode = ['/usr/bin/node', '/usr/local/bin/node'].find((path) => {
  const run = spawnSync(path, ['-p', 'process.versions.node'], { encoding: 'utf8' });
  return !run.error && Number(run.stdout.split('.')[0]) < 24;
});
if (!oldNode) console.warn('[old node] skipped: no Node older than 24 at /usr/bin/node or /usr/local/bin/node');

const bin = `${repoRoot}bin/refsync.js`;
const platform = `node-${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`;
const installedHere = existsSync(`${repoRoot}node_modules/${platform}`);

describe.skipIf(!oldNode)('refsync on a Node older than 24', () => {
  it.skipIf(!installedHere)('runs the command on the Node 24 that npm ci installed, with its exit code', () => {
    const version = spawnSync(oldNode!, [bin, '--version'], { encoding: 'utf8' });
    expect(version.stderr).toBe('');
    expect(version.status).toBe(0);
    expect(version.stdout).toMatch(new RegExp(`^refsync ${packageVersion.replaceAll('.', '\\.')} \\(schema version \\d+: `));
    const unknown = spawnSync(oldNode!, [bin, 'no-such-command'], { encoding: 'utf8' });
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/^refsync: unknown command 'no-such-command'/);
  });

  it('on a platform npm has no Node 24 package for, says to install Node 24 and names the platforms it has', () => {
    // The platform as the process sees it, faked before the bin runs.
    const fake = `data:text/javascript,Object.defineProperty(process, 'arch', { value: 'ppc64' })`;
    const run = spawnSync(oldNode!, ['--import', fake, bin, 'status'], { encoding: 'utf8' });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(
      /^refsync: needs Node\.js 24 or newer \(this is v[\d.]+\); npm has no Node 24 package for linux-ppc64 \(refsync brings one for darwin-x64, linux-arm64, linux-x64, win-x64\): install Node\.js 24 or newer yourself and run again\n$/,
    );
  });
});
