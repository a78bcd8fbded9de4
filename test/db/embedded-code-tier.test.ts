// Embedded PGlite's code stays at V8's baseline tier (src/db/embedded-code-tier.ts), so a short
// command does not wait at exit for TurboFan to finish recompiling Postgres's parser. Seen through
// V8's own trace of what it compiled, beside a plain Node process that opens the same database.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { testTempDir } from '../helpers/temp-dir.ts';

const TRACE = '--trace-wasm-compilation-times';
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const dir = testTempDir('refsync-code-tier');

/** A process that loads PGlite as any program would, with none of refsync's code. */
const PLAIN_PGLITE = `
import { PGlite } from '@electric-sql/pglite';
const db = new PGlite(process.argv[1]);
for (let i = 0; i < 50; i++) await db.query('select count(*) from pg_class where relname like $1', ['x' + i]);
await db.close();
`;

/** The WebAssembly functions V8 compiled with TurboFan (index → body size in bytes), from its trace on stdout. */
function turbofanCompiles(trace: string): Map<number, number> {
  const compiled = new Map<number, number>();
  for (const m of trace.matchAll(/Compiled function \S+#(\d+) using TurboFan, .*?bodysize (\d+)/g)) compiled.set(Number(m[1]), Number(m[2]));
  return compiled;
}

it("refsync migrate on PGlite leaves Postgres's parser at the baseline tier, where a plain process recompiles it with TurboFan", async () => {
  const migrate = await runCli(['migrate'], { cwd: dir, env: {}, nodeArgs: [TRACE] });
  expect({ code: migrate.code, stderr: migrate.stderr }).toEqual({ code: 0, stderr: '' });
  expect(migrate.stdout).toContain('migrations applied: ');

  const plain = await promisify(execFile)(process.execPath, [TRACE, '--input-type=module', '-e', PLAIN_PGLITE, join(dir, '.refsync', 'pgdata')], {
    cwd: repoRoot,
    maxBuffer: 64 * 1024 * 1024,
  });
  // The largest function a plain process tiers up is the one that made refsync wait: the parser.
  const [parser, bodySize] = [...turbofanCompiles(plain.stdout)].sort((a, b) => b[1] - a[1])[0] ?? [];
  expect(bodySize).toBeGreaterThan(50_000);
  expect(turbofanCompiles(migrate.stdout).has(parser as number)).toBe(false);
});
