import { readFileSync } from 'node:fs';

/** Where the worker's memory budget came from, told in the startup log line and on /metrics. */
export type MemoryLimitSource = 'setting' | 'cgroup v2' | 'cgroup v1' | 'default';

export interface MemoryLimit {
  bytes: number;
  from: MemoryLimitSource;
}

const MiB = 1024 * 1024;

/** The budget with neither a setting nor a container limit: what the compose file gives the worker. */
export const DEFAULT_MEMORY_BUDGET_MB = 1024;

/** The values REFSYNC_MEMORY_BUDGET_MB may take, in MiB. */
export const MEMORY_BUDGET_MB_RANGE = { min: 64, max: 1_048_576 } as const;

/** The files a container's memory limit is read from: cgroup v2 first, then v1. */
export const cgroupLimitFiles: ReadonlyArray<{ path: string; from: MemoryLimitSource }> = [
  { path: '/sys/fs/cgroup/memory.max', from: 'cgroup v2' },
  { path: '/sys/fs/cgroup/memory/memory.limit_in_bytes', from: 'cgroup v1' },
];

/**
 * cgroup v1 says "no limit" with a number near 2^63 (rounded down to the page size), v2 with
 * "max"; anything above 2^50 bytes (a petabyte) is no limit a worker could reach.
 */
const NO_LIMIT_ABOVE = 2 ** 50;

function readCgroupLimit(files: typeof cgroupLimitFiles): MemoryLimit | undefined {
  for (const { path, from } of files) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8').trim();
    } catch {
      continue;
    }
    const bytes = Number(text);
    if (text === 'max' || !Number.isFinite(bytes) || bytes <= 0 || bytes >= NO_LIMIT_ABOVE) return undefined;
    return { bytes, from };
  }
  return undefined;
}

/**
 * The worker's memory budget: the container's cgroup limit when it has one, REFSYNC_MEMORY_BUDGET_MB
 * when set (the smaller of the two when both are: a setting above the limit would only let the
 * kernel kill the worker), else DEFAULT_MEMORY_BUDGET_MB.
 */
export function memoryLimit(settingMb: number | undefined, files = cgroupLimitFiles): MemoryLimit {
  const cgroup = readCgroupLimit(files);
  const setting = settingMb === undefined ? undefined : { bytes: settingMb * MiB, from: 'setting' as const };
  if (cgroup && setting) return setting.bytes <= cgroup.bytes ? setting : cgroup;
  return setting ?? cgroup ?? { bytes: DEFAULT_MEMORY_BUDGET_MB * MiB, from: 'default' };
}
