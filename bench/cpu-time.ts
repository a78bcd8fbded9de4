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
 * A reading of the CPU used so far: each part's seconds, Postgres apart, by server (its postmaster's
 * pid): a test beside a bench may start and stop a Postgres cluster of its own, whose CPU would
 * leave the total with it. cpuUsed compares the servers present in both readings.
 */
export interface CpuReading {
  parts: Partial<Record<Exclude<CpuPart, 'postgres'>, number>>;
  postgres: Map<number, number>;
}

/**
 * One pass over /proc. A Postgres server is its postmaster, its live backends and what it has
 * reaped (every backend that has ended). Tests running beside a bench end backends all the time,
 * and one that ends between its own line and the postmaster's would be counted twice or not at all:
 * so the backends' own times are taken from the pass, and then, between two readings of the
 * postmaster's reaped times that agree, only those of the backends still there are kept. A backend
 * gone by then was reaped before the first reading (none was reaped between the two), so its time
 * is in the reaped times, once.
 */
async function scan(workers: ReadonlySet<number>): Promise<CpuReading | undefined> {
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return undefined;
  }
  const parts: CpuReading['parts'] = {};
  const add = (part: Exclude<CpuPart, 'postgres'>, ticks: number) => (parts[part] = (parts[part] ?? 0) + ticks / TICKS_PER_SECOND);
  const postmasters = new Map<number, number>();
  const backends: ProcTimes[] = [];
  for (const name of entries) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const t = await procTimes(pid);
    if (!t) continue;
    if (workers.has(pid)) add('workers', t.own);
    else if (pid === process.pid) add('bench', t.own);
    else if (t.comm === 'postgres' || t.comm === 'postmaster') {
      if (isPostmaster(t)) postmasters.set(pid, t.own);
      else backends.push(t);
    } else if (t.comm.startsWith('redis-server')) add('redis', t.own);
    else if (t.ppid === process.pid && (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).includes('sandbox-child')) add('sandbox', t.own);
  }
  const postgres = new Map<number, number>();
  for (const [pid, own] of postmasters) {
    const ticks = await settledBackends(
      pid,
      backends.filter((b) => b.ppid === pid),
    );
    if (ticks !== undefined) postgres.set(pid, (own + ticks) / TICKS_PER_SECOND);
  }
  return { parts, postgres };
}

/** A server's backends' times, in clock ticks: the reaped ones' and the own times of those still there (scan says why); undefined once the server is gone. */
async function settledBackends(postmaster: number, backends: readonly ProcTimes[]): Promise<number | undefined> {
  for (let attempt = 1; ; attempt++) {
    const reaped = (await procTimes(postmaster))?.reaped;
    if (reaped === undefined) return undefined;
    let live = 0;
    for (const b of backends) if (await procTimes(b.pid)) live += b.own;
    // Past a few tries (a storm of backends ending) the last one stands: off by a backend at most.
    if ((await procTimes(postmaster))?.reaped === reaped || attempt === 20) return reaped + live;
  }
}

/** CPU used so far by each part: `workers` are the given pids, the sandbox is found by its command line. */
export async function cpuSeconds(workerPids: readonly number[]): Promise<CpuReading> {
  return (await scan(new Set(workerPids))) ?? { parts: {}, postgres: new Map() };
}

/** Seconds of CPU each part used between two readings; Postgres's, of the servers running at both. */
export function cpuUsed(before: CpuReading, after: CpuReading): Partial<Record<CpuPart, number>> {
  const used: Partial<Record<CpuPart, number>> = {};
  for (const part of Object.keys(after.parts) as Array<keyof CpuReading['parts']>) used[part] = (after.parts[part] ?? 0) - (before.parts[part] ?? 0);
  let postgres: number | undefined;
  for (const [pid, seconds] of after.postgres) {
    const earlier = before.postgres.get(pid);
    if (earlier !== undefined) postgres = (postgres ?? 0) + seconds - earlier;
  }
  if (postgres !== undefined) used.postgres = postgres;
  return used;
}

/** The CPU each part used, as one line: "workers 80.1 s, postgres 60.2 s, ... of 238 s (2 cores x 119 s)". */
export function describeCpu(used: Partial<Record<CpuPart, number>>, wallSeconds: number, cores: number): string {
  const parts = (Object.entries(used) as Array<[CpuPart, number]>).filter(([, s]) => s > 0.05).sort((a, b) => b[1] - a[1]);
  if (!parts.length) return 'CPU time by part: not available (no /proc)';
  const total = parts.reduce((n, [, s]) => n + s, 0);
  const line = parts.map(([part, s]) => `${part} ${s.toFixed(1)} s`).join(', ');
  return `CPU time by part: ${line}; ${total.toFixed(1)} s in all of ${(cores * wallSeconds).toFixed(0)} s (${cores} cores x ${wallSeconds.toFixed(1)} s)`;
}
