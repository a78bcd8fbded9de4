// The memory budget's own rules: where its size comes from (cgroup v2, v1, the setting, the
// default), and how shares are handed out (fit, alone, first come first served, abort).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryBudget, type BudgetEvent } from '../../src/memory/memory-budget.ts';
import { DEFAULT_MEMORY_BUDGET_MB, memoryLimit, type MemoryLimitSource } from '../../src/memory/memory-limit.ts';
import { listBytes, UNKNOWN_LIST_BYTES } from '../../src/memory/list-sizes.ts';
import { MIN_HEAP_LIMIT_MB, missingHeapFlags, SEMI_SPACE_FLAG } from '../../src/memory/heap-flags.ts';
import { testTempDir } from '../helpers/temp-dir.ts';

const MiB = 1024 * 1024;

function cgroupFiles(v2?: string, v1?: string): Array<{ path: string; from: MemoryLimitSource }> {
  const dir = testTempDir('refsync-cgroup');
  const files: Array<{ path: string; from: MemoryLimitSource }> = [
    { path: join(dir, 'memory.max'), from: 'cgroup v2' },
    { path: join(dir, 'memory.limit_in_bytes'), from: 'cgroup v1' },
  ];
  if (v2 !== undefined) writeFileSync(files[0]!.path, `${v2}\n`);
  if (v1 !== undefined) writeFileSync(files[1]!.path, `${v1}\n`);
  return files;
}

describe('the memory limit', () => {
  it('reads cgroup v2, then v1; "max" and v1\'s near-2^63 mean no limit; the setting caps it', () => {
    expect(memoryLimit(undefined, cgroupFiles(String(768 * MiB)))).toEqual({ bytes: 768 * MiB, from: 'cgroup v2' });
    expect(memoryLimit(undefined, cgroupFiles(undefined, String(640 * MiB)))).toEqual({ bytes: 640 * MiB, from: 'cgroup v1' });
    expect(memoryLimit(undefined, cgroupFiles('max'))).toEqual({ bytes: DEFAULT_MEMORY_BUDGET_MB * MiB, from: 'default' });
    expect(memoryLimit(undefined, cgroupFiles(undefined, '9223372036854771712'))).toEqual({ bytes: DEFAULT_MEMORY_BUDGET_MB * MiB, from: 'default' });
    expect(memoryLimit(undefined, cgroupFiles())).toEqual({ bytes: DEFAULT_MEMORY_BUDGET_MB * MiB, from: 'default' });
    expect(memoryLimit(512, cgroupFiles())).toEqual({ bytes: 512 * MiB, from: 'setting' });
    // Both: the smaller, since a setting above the container's limit would only get the worker killed.
    expect(memoryLimit(512, cgroupFiles(String(2048 * MiB)))).toEqual({ bytes: 512 * MiB, from: 'setting' });
    expect(memoryLimit(4096, cgroupFiles(String(2048 * MiB)))).toEqual({ bytes: 2048 * MiB, from: 'cgroup v2' });
  });

  it("sets V8's old space to half the budget and caps the young generation, unless Node was given either", () => {
    const none = cgroupFiles();
    const oldSpace = (mb: number) => [`--max-old-space-size=${mb}`, SEMI_SPACE_FLAG];
    expect(missingHeapFlags([], {}, none)).toEqual(oldSpace(DEFAULT_MEMORY_BUDGET_MB / 2));
    expect(missingHeapFlags([], { REFSYNC_MEMORY_BUDGET_MB: '600' }, none)).toEqual(oldSpace(300));
    expect(missingHeapFlags([], {}, cgroupFiles(String(768 * MiB)))).toEqual(oldSpace(384));
    // The setting is capped by the container's limit, as the budget is.
    expect(missingHeapFlags([], { REFSYNC_MEMORY_BUDGET_MB: '4096' }, cgroupFiles(String(768 * MiB)))).toEqual(oldSpace(384));
    expect(missingHeapFlags([], { REFSYNC_MEMORY_BUDGET_MB: '100' }, none)).toEqual(oldSpace(MIN_HEAP_LIMIT_MB));
    // A setting the configuration will refuse (with its own message) leaves the default.
    expect(missingHeapFlags([], { REFSYNC_MEMORY_BUDGET_MB: '12 GB' }, none)).toEqual(oldSpace(DEFAULT_MEMORY_BUDGET_MB / 2));
    // The person starting Node chose one: on its command line or in NODE_OPTIONS, dashes or underscores.
    expect(missingHeapFlags(['--max-old-space-size=2048'], { REFSYNC_MEMORY_BUDGET_MB: '600' }, none)).toEqual([SEMI_SPACE_FLAG]);
    expect(missingHeapFlags(['--max-semi-space-size=16'], { REFSYNC_MEMORY_BUDGET_MB: '600' }, none)).toEqual(['--max-old-space-size=300']);
    expect(missingHeapFlags(['--max-old-space-size=900'], { NODE_OPTIONS: '--enable-source-maps --max_semi_space_size=4' }, none)).toEqual([]);
  });

  it('counts a list at its last size, or as a million entries when it has none', () => {
    expect(listBytes(undefined)).toBe(UNKNOWN_LIST_BYTES);
    expect(listBytes(10_000)).toBe(10_000 * 256);
    expect(listBytes(10_000, 50_000)).toBe(50_000 * 256);
  });
});

describe('the memory budget', () => {
  it('admits what fits, a list too large for the budget alone, and waiters in the order they came', async () => {
    const events: BudgetEvent[] = [];
    const budget = new MemoryBudget(300, 100, (e) => events.push(e));
    expect(budget.forLargeLists).toBe(200);
    const huge = budget.tryReserve(500, 'huge');
    expect(huge?.bytes).toBe(500);
    expect(budget.tryReserve(1, 'tiny')).toBeUndefined();
    const a = budget.reserve(150, 'a');
    const b = budget.reserve(40, 'b');
    // b would fit beside a, but a asked first: nothing overtakes a waiting list.
    expect(budget.tryReserve(10, 'late')).toBeUndefined();
    huge!.release();
    huge!.release();
    const [ra, rb] = await Promise.all([a, b]);
    expect(budget.reserved).toBe(190);
    ra.release();
    rb.release();
    expect(events.map((e) => `${e.kind} ${e.label} ${e.reserved}`)).toEqual([
      'admitted huge 500',
      'waiting a 500',
      'waiting b 500',
      'released huge 0',
      'admitted a 150',
      'admitted b 190',
      'released a 40',
      'released b 0',
    ]);
  });

  it('stops waiting on abort, and the list behind it moves up', async () => {
    const budget = new MemoryBudget(300, 100);
    const held = budget.tryReserve(150, 'held')!;
    const stop = new AbortController();
    const big = budget.reserve(100, 'big', stop.signal);
    const small = budget.reserve(50, 'small');
    stop.abort(new Error('shutting down'));
    await expect(big).rejects.toThrow('shutting down');
    expect((await small).bytes).toBe(50);
    expect(budget.waiting).toBe(0);
    held.release();
  });
});
