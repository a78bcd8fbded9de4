// The files of src/ a first sync of one small list runs through: the reading set a maintainer needs
// to follow that path, counted rather than guessed.
//
//   node scripts/reading-set.ts [LIST_KEY]     (default shipment_statuses; needs DATABASE_URL's server)
//
// It starts the sandbox, migrates a fresh database and opens the upstream client, then measures
// precise coverage around one `runSync` of the one list (the way `refsync sync --list KEY` runs it):
// a file counts when a function of it ran, its module's own top level aside (evaluated at import,
// before the window). Startup (command line, configuration, the pool, the migrations) is outside
// the window: it is the same for every command and has its own pages.
import { Session } from 'node:inspector/promises';
import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isListKey } from '../src/catalog/list-keys.ts';
import { runSync } from '../src/sync/run/run-sync.ts';
import { createUpstreamClient } from '../src/upstream/index.ts';
import { benchSource, createBenchDatabase, runMain, startBenchSandbox } from '../bench/lib.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

interface ScriptCoverage {
  url: string;
  functions: Array<{ functionName: string; ranges: Array<{ startOffset: number; endOffset: number; count: number }> }>;
}

/** The src/ files with a function that ran, besides the module's top level (the function V8 names ''
 * whose range starts at offset 0). */
function filesRun(result: ScriptCoverage[]): string[] {
  const files = result
    .filter((s) => s.url.startsWith('file:') && relative(root, fileURLToPath(s.url)).startsWith('src/'))
    .filter((s) => s.functions.some((f) => !(f.functionName === '' && f.ranges[0]!.startOffset === 0) && f.ranges[0]!.count > 0))
    .map((s) => relative(root, fileURLToPath(s.url)));
  return [...new Set(files)].sort();
}

runMain(async () => {
  const list = process.argv[2] ?? 'shipment_statuses';
  if (!isListKey(list)) throw new Error(`not a list key: ${list}`);
  const sandbox = await startBenchSandbox();
  const bench = await createBenchDatabase({ prefix: 'refsync_reading' });
  const session = new Session();
  try {
    const source = benchSource(sandbox);
    const client = createUpstreamClient(source);
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
    // Taking coverage resets its counters: what ran before the sync is left out.
    await session.post('Profiler.takePreciseCoverage');
    const [run] = await runSync({ db: bench.db, sources: [source], clientFor: () => client, trigger: 'manual', lists: [list] });
    const { result } = (await session.post('Profiler.takePreciseCoverage')) as { result: ScriptCoverage[] };
    const files = filesRun(result);
    const status = run?.outcomes.map((o) => `${o.target.list.key}: ${o.status}`).join(', ');
    const lines = await Promise.all(files.map(async (file) => (await readFile(join(root, file), 'utf8')).split('\n').length - 1));
    const total = lines.reduce((a, b) => a + b, 0);
    console.log(`first sync of ${list} (${status}): ${files.length} files of src/ ran, ${total} lines`);
    // The HTTP client (src/upstream/) is behind the fetch's one value (list-batch.ts): the reading set is the rest.
    const reading = files.flatMap((file, i) => (file.startsWith('src/upstream/') ? [] : [lines[i]!]));
    console.log(`reading set, outside the HTTP client: ${reading.length} files, ${reading.reduce((a, b) => a + b, 0)} lines`);
    for (const [i, file] of files.entries()) console.log(`  ${String(lines[i]).padStart(5)}  ${file}`);
    // By folder.
    const byFolder = new Map<string, { files: number; lines: number }>();
    for (const [i, file] of files.entries()) {
      const folder = file.split('/').slice(1, -1).join('/') || '.';
      const sum = byFolder.get(folder) ?? { files: 0, lines: 0 };
      byFolder.set(folder, { files: sum.files + 1, lines: sum.lines + lines[i]! });
    }
    console.log('by folder of src/:');
    for (const [folder, sum] of [...byFolder].sort(([a], [b]) => a.localeCompare(b)))
      console.log(`  ${String(sum.files).padStart(3)} ${sum.files === 1 ? 'file ' : 'files'} ${String(sum.lines).padStart(5)} lines  ${folder}/`);
    await client.close();
  } finally {
    session.disconnect();
    await bench.drop();
    await sandbox.close();
  }
});
