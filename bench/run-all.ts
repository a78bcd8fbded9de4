// `npm run bench`: P1 to P7 one after another (never at once: they would share the two cores),
// each printing its progress, then every figure again at the end.
//
//   npm run bench                 every benchmark
//   npm run bench -- p1 p3        some of them
//   npm run bench -- --save       and the run as one JSON file under bench/results/ (machine,
//                                 commit, date, every figure with its baseline), which
//                                 `node scripts/render-bench-results.ts` renders into docs/performance.md
import pg from 'pg';
import { BenchUsageError, formatFigure, machineInfo, runMain, serverUrl, type Figure } from './lib.ts';
import { runP1 } from './p1-full-sync.ts';
import { runP2 } from './p2-unchanged-sync.ts';
import { runP3 } from './p3-large-list.ts';
import { runP4BadSources } from './p4-bad-sources.ts';
import { runP4 } from './p4-many-sources.ts';
import { runP5 } from './p5-impact.ts';
import { runP6 } from './p6-worker-memory.ts';
import { runP7 } from './p7-change-feed.ts';
import { runRecord, saveRunRecord } from './run-record.ts';

const benchmarks: Record<string, () => Promise<Figure[]>> = {
  p1: () => runP1(),
  p2: () => runP2(),
  p3: () => runP3(),
  p4: () => runP4(),
  p5: () => runP5(),
  p6: () => runP6(),
  p7: () => runP7(),
  'p4-bad': () => runP4BadSources(),
};

runMain(async () => {
  const args = process.argv.slice(2).map((a) => a.toLowerCase());
  const save = args.includes('--save');
  const wanted = args.filter((a) => a !== '--save');
  const unknownFlags = wanted.filter((a) => a.startsWith('-'));
  if (unknownFlags.length) throw new BenchUsageError(`unknown option(s): ${unknownFlags.join(', ')} (have --save)`);
  const startedAt = new Date();
  const names = wanted.length ? wanted : Object.keys(benchmarks);
  const unknown = names.filter((n) => !benchmarks[n]);
  if (unknown.length) throw new BenchUsageError(`unknown benchmark(s): ${unknown.join(', ')} (have ${Object.keys(benchmarks).join(', ')})`);
  const all: Figure[] = [];
  for (const name of names) {
    console.log(`--- ${name}`);
    const figures = await benchmarks[name]!();
    for (const f of figures) console.log(formatFigure(f));
    all.push(...figures);
  }
  console.log('--- summary');
  for (const f of all) console.log(formatFigure(f));
  if (save) console.log(`saved ${await saveRun(startedAt, names, all)}`);
});

async function saveRun(startedAt: Date, names: string[], figures: Figure[]): Promise<string> {
  const client = new pg.Client({ connectionString: serverUrl() });
  await client.connect();
  try {
    return saveRunRecord(runRecord(startedAt, names, await machineInfo(client), figures));
  } finally {
    await client.end();
  }
}
