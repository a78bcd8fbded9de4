import type { AppConfig } from '../config/types.ts';
import type { Database } from '../db/database.ts';
import { MemoryBudget, type BudgetEvent } from './memory-budget.ts';
import { memoryLimit, type MemoryLimitSource } from './memory-limit.ts';
import { ListSizes, WORKER_SHARE_BYTES } from './list-sizes.ts';
import type { WorkerMemory } from './target-memory.ts';
import type { Logger } from '../util/logger.ts';

const MiB = 1024 * 1024;

/**
 * The worker's memory budget (the cgroup limit or REFSYNC_MEMORY_BUDGET_MB) and every target's last
 * entry count. A list waiting for a share is told at info: it explains a job that runs longer than
 * its fetch; the shares taken and given back are told at debug.
 */
export async function openWorkerMemory(config: AppConfig, db: Database, logger: Logger): Promise<WorkerMemory & { from: MemoryLimitSource }> {
  const limit = memoryLimit(config.memoryBudgetMb);
  const log = logger.child({ component: 'memory' });
  const onEvent = (event: BudgetEvent) => {
    const fields = { list: event.label, mib: Math.round(event.bytes / MiB), reservedMib: Math.round(event.reserved / MiB) };
    if (event.kind === 'waiting') log.info(fields, 'large list waits for the memory budget');
    else log.debug(fields, event.kind === 'admitted' ? 'large list admitted to the memory budget' : 'large list released its memory budget');
  };
  const budget = new MemoryBudget(limit.bytes, WORKER_SHARE_BYTES, onEvent);
  return { budget, sizes: await ListSizes.read(db), from: limit.from };
}
