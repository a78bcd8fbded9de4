// bin/refsync.js keeps V8's compiled code of the modules a command loads in the checkout's
// node_modules/.cache/refsync-compile: the next command takes refsync's code from there instead of
// stripping its types and compiling it again. Seen through Node's own account of the cache
// (NODE_DEBUG_NATIVE=COMPILE_CACHE, on stderr).
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { packageVersion } from '../../src/util/package-version.ts';
import { runCli } from '../helpers/cli.ts';

const cacheDir = fileURLToPath(new URL('../../node_modules/.cache/refsync-compile/', import.meta.url));
const mainModule = new URL('../../src/cli/main.ts', import.meta.url).href;
const debug = { NODE_DEBUG_NATIVE: 'COMPILE_CACHE' };

describe('the compile cache', () => {
  it("a second command takes refsync's stripped and compiled code from node_modules/.cache, and prints what it always did", async () => {
    const first = await runCli(['--version'], { env: debug });
    expect(first.code).toBe(0);
    const second = await runCli(['--version'], { env: debug });
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(new RegExp(`^refsync ${packageVersion.replaceAll('.', '\\.')} \\(schema version \\d+: `));
    expect(second.stderr).toContain(`[compile cache] reading cache from ${cacheDir}`);
    expect(second.stderr).toContain(`retrieving transpile cache for StrippedTypeScript ${mainModule}...success`);
    expect(second.stderr).toContain(`V8 code cache for ESM ${mainModule} was accepted`);
  });

  it('NODE_DISABLE_COMPILE_CACHE=1 turns it off', async () => {
    const res = await runCli(['--version'], { env: { ...debug, NODE_DISABLE_COMPILE_CACHE: '1' } });
    expect(res.code).toBe(0);
    expect(res.stderr).not.toContain('reading cache from');
    expect(res.stderr).not.toContain('was accepted');
  });
});
