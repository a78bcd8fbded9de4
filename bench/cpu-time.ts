// CPU time spent by each part of a benchmark (the workers, Postgres, Redis, the sandbox), read from
// /proc before and after a measured stretch: on 2 cores every part competes for the same CPUs, so a
// slot's wall time is first of all where its CPU went. Linux only; elsewhere it reports nothing.
import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ, 100 on every Linux build in use). */
const TICKS_PER_SECOND = 100;

export type CpuPart = 'workers' | 'postgres' | 'redis' | 'sandbox' | 'bench';

interface ProcTimes {
  pid: number;
  ppid: number;
  comm: string;
  /** utime + stime of the process itself. */
  own: number;
  /** cutime + cstime: its children that have exited and been waited for. */
  reaped: number;
}

/** The times of a /proc/<pid>/stat (or /proc/<pid>/task/<tid>/stat) line, in clock ticks. */
function parseStat(pid: number, stat: string): ProcTimes {
  // comm is in parentheses and may hold spaces; the fields after it are space-separated.
  const close = stat.lastIndexOf(')');
  const comm = stat.slice(stat.indexOf('(') + 1, close);
  const f = stat.slice(close + 2).split(' ');
  return { pid, ppid: Number(f[1]), comm, own: Number(f[11]) + Number(f[12]), reaped: Number(f[13]) + Number(f[14]) };
}

async function procTimes(pid: number): Promise<ProcTimes | undefined> {
  try {
    return parseStat(pid, await readFile(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Seconds of CPU this process's main thread has used so far (its own task in /proc); undefined without /proc. */
export function mainThreadCpuSeconds(): number | undefined {
  try {
    return parseStat(process.pid, readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8')).own / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** Whether this process is the postmaster, whose reaped times hold every backend that has ended. */
function isPostmaster(t: ProcTimes): boolean {
  return t.comm === 'postmaster' || (t.comm === 'postgres' && t.ppid === 1);
}

/**
 * One pass over /proc: each part's CPU, and whether a backend ended during it. The postmaster's
 * reaped times (every backend that has ended) are read at the end of the pass, not where its pid
 * comes (first: it is the lowest), so a backend that ends in between is counted in them rather than
 * nowhere; if one ended in between, it may be counted twice instead, and the pass says so.
 */
async function scan(workers: ReadonlySet<number>): Promise<{ parts: Partial<Record<CpuPart, number>>; backendEnded: boolean } | undefined> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return undefined;
  }
  const parts: Partial<Record<CpuPart, number>> = {};
  const add = (part: CpuPart, ticks: number) => (parts[part] = (parts[part] ?? 0) + ticks / TICKS_PER_SECOND);
  const postmasters = new Map<number, number>();
  for (const name of entries) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const t = await procTimes(pid);
    if (!t) continue;
    if (workers.has(pid)) add('workers', t.own);
    else if (pid === process.pid) add('bench', t.own);
    else if (t.comm === 'postgres' || t.comm === 'postmaster') {
      add('postgres', t.own);
      if (isPostmaster(t)) postmasters.set(pid, t.reaped);
    } else if (t.comm.startsWith('redis-server')) add('redis', t.own);
    else if (t.ppid === process.pid && (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).includes('sandbox-child')) add('sandbox', t.own);
  }
  let backendEnded = false;
  for (const [pid, reapedBefore] of postmasters) {
    const reaped = (await procTimes(pid))?.reaped ?? reapedBefore;
    add('postgres', reaped);
    backendEnded ||= reaped !== reapedBefore;
  }
  return { parts, backendEnded };
}

/**
 * Seconds of CPU used so far by each part: `workers` are the given pids, the sandbox is found by its
 * command line. A pass during which a backend ended (tests running beside it end theirs all the
 * time) is taken again, a few times at most: such a backend may be counted twice, which made a
 * Postgres delta negative when the earlier reading was the one that overcounted.
 */
export async function cpuSeconds(workerPids: readonly number[]): Promise<Partial<Record<CpuPart, number>>> {
  const workers = new Set(workerPids);
  let pass = await scan(workers);
  for (let retry = 0; pass?.backendEnded && retry < 5; retry++) pass = await scan(workers);
  return pass?.parts ?? {};
}

/** The CPU each part used between two readings, as one line: "workers 80.1 s, postgres 60.2 s, ... of 238 s (2 cores x 119 s)". */
export function describeCpu(before: Partial<Record<CpuPart, number>>, after: Partial<Record<CpuPart, number>>, wallSeconds: number, cores: number): string {
  const used = (Object.keys(after) as CpuPart[])
    .map((part) => [part, (after[part] ?? 0) - (before[part] ?? 0)] as const)
    .filter(([, s]) => s > 0.05)
    .sort((a, b) => b[1] - a[1]);
  if (!used.length) return 'CPU time by part: not available (no /proc)';
  const total = used.reduce((n, [, s]) => n + s, 0);
  const parts = used.map(([part, s]) => `${part} ${s.toFixed(1)} s`).join(', ');
  return `CPU time by part: ${parts}; ${total.toFixed(1)} s in all of ${(cores * wallSeconds).toFixed(0)} s (${cores} cores x ${wallSeconds.toFixed(1)} s)`;
}
