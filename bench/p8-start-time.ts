// P8: how long a command takes to start, installed from the npm package beside the checkout, in the
// same run: `refsync --version` (loads the CLI, reads package.json and the migrations' journal) and
// `refsync status` (loads the database and Redis clients, reads both), beside `node -e 0` (Node
// itself). A cron `refsync sync` pays this every time. The package is packed and installed as the
// image installs it (scripts/install-package.sh, by test/release/installed.ts's helpers) and run by
// the same Node 24 as the checkout; the global install, where the machine has a Node of its own, is
// run by that Node, which hands the command to the package's Node 24 when it is older than 22.19.
// Each start is timed from spawn to exit; runs alternate between the installs (a loaded machine
// slows all alike) after two unmeasured runs each, which also fill the compile caches.
//
//   npm run bench -- p8            BENCH_START_RUNS=15 (default) measured runs per command
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { installForProduction, installGlobally, machineNode, machinePath, packCheckout, removeTempDirs, repoRoot } from '../test/release/installed.ts';
import { createBenchDatabase, figure, median, redisUrl, type Figure } from './lib.ts';

interface Starter {
  name: string;
  argv: (args: string[]) => [string, string[]];
  path?: string;
}

/**
 * CPU milliseconds of this process's waited-for children so far (cutime + cstime of /proc/self/stat,
 * in 10 ms ticks): a run's CPU is less at the mercy of what else the machine does than its wall time.
 * Undefined without /proc.
 */
function childrenCpuMs(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[13]) + Number(f[14])) * 10;
  } catch {
    return undefined;
  }
}

/** Wall and CPU milliseconds of one run, spawn to exit (a failed run stops the bench: its time would mean nothing). */
function timeOnce(starter: Starter, args: string[], env: Record<string, string>): { wall: number; cpu: number | undefined } {
  const [command, argv] = starter.argv(args);
  const cpuBefore = childrenCpuMs();
  const started = process.hrtime.bigint();
  const res = spawnSync(command, argv, { env: { PATH: starter.path ?? process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, encoding: 'utf8' });
  const wall = Number(process.hrtime.bigint() - started) / 1e6;
  const cpuAfter = childrenCpuMs();
  if (res.status !== 0) throw new Error(`P8: ${starter.name} ${args.join(' ')} exited ${res.status ?? res.signal}: ${res.stderr.slice(0, 400)}`);
  return { wall, cpu: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore };
}

interface Medians {
  wall: number;
  cpu: number | undefined;
}

/** Median wall and CPU time of each starter for `args`, runs interleaved. */
function medians(starters: Starter[], args: string[], env: Record<string, string>, runs: number): Map<string, Medians> {
  const times = new Map<string, Array<{ wall: number; cpu: number | undefined }>>(starters.map((s) => [s.name, []]));
  for (let i = 0; i < runs + 2; i++) {
    for (const s of starters) {
      const t = timeOnce(s, args, env);
      if (i >= 2) times.get(s.name)!.push(t);
    }
  }
  return new Map(
    [...times].map(([name, values]) => {
      const cpu = values.every((v) => v.cpu !== undefined) ? median(values.map((v) => v.cpu!)) : undefined;
      return [name, { wall: median(values.map((v) => v.wall)), cpu }];
    }),
  );
}

export async function runP8(): Promise<Figure[]> {
  const runs = Number(process.env.BENCH_START_RUNS ?? 15);
  console.log('P8: packing the checkout and installing the tarball (production, and global where the machine has a node)');
  const tarball = await packCheckout();
  const [app, globalBin] = await Promise.all([installForProduction(tarball), machineNode ? installGlobally(tarball) : undefined]);
  const node: Starter = { name: 'node -e 0', argv: () => [process.execPath, ['-e', '0']] };
  const checkout: Starter = { name: 'checkout', argv: (args) => [process.execPath, [join(repoRoot, 'bin/refsync.js'), ...args]] };
  const installed: Starter = { name: 'installed', argv: (args) => [process.execPath, [join(app, 'bin/refsync.js'), ...args]] };
  const starters = [node, checkout, installed];
  if (globalBin) starters.push({ name: 'global', argv: (args) => [globalBin, args], path: machinePath });
  const machine = machineNode ? spawnSync(machineNode, ['--version'], { encoding: 'utf8' }).stdout.trim() : undefined;

  const bench = await createBenchDatabase({ poolSize: 2, prefix: 'refsync_bench_p8' });
  try {
    const version = medians(starters, ['--version'], {}, runs);
    const status = medians(starters, ['status'], { DATABASE_URL: bench.url, REDIS_URL: redisUrl(), REFSYNC_QUEUE_PREFIX: 'refsync-bench-p8' }, runs);
    const ms = (m: Medians) => `${m.wall.toFixed(0)} ms${m.cpu === undefined ? '' : ` (CPU ${m.cpu.toFixed(0)} ms)`}`;
    const notes = (m: Map<string, Medians>) =>
      [
        `CPU installed ${m.get('installed')!.cpu ?? '?'} ms vs checkout ${m.get('checkout')!.cpu ?? '?'} ms`,
        `node -e 0 ${ms(m.get('node -e 0')!)}`,
        globalBin ? `global on the machine's node ${machine} ${ms(m.get('global')!)}` : 'no machine node: global not measured',
        `median of ${runs} runs`,
      ].join('; ');
    const target = { ratio: 1, better: 'lower' as const };
    return [
      figure('P8 start, refsync --version, installed package', version.get('installed')!.wall, 'ms', 'checkout', version.get('checkout')!.wall, {
        target,
        notes: notes(version),
      }),
      figure('P8 start, refsync status, installed package', status.get('installed')!.wall, 'ms', 'checkout', status.get('checkout')!.wall, {
        target,
        notes: notes(status),
      }),
    ];
  } finally {
    await bench.drop();
    removeTempDirs();
  }
}
