import { UnrecoverableError, type Queue } from 'bullmq';
import type { SourceConfig } from '../../config/types.ts';
import type { Database } from '../../db/database.ts';
import type { WorkerMemory } from '../../memory/target-memory.ts';
import type { WorkerMetrics } from '../../server/metrics.ts';
import type { PageSource, SyncTuning } from '../../sync/sync-target.ts';
import type { Logger } from '../../util/logger.ts';
import type { QuietRepeats } from '../../util/quiet-repeats.ts';
import type { JobPolicy } from '../jobs.ts';
import type { SourceGate } from '../admission/source-gate.ts';
import type { SyncSlots } from '../admission/sync-slots.ts';

export interface ProcessorDeps {
  db: Database;
  queue: Queue;
  sources: SourceConfig[];
  clientFor(source: SourceConfig): PageSource;
  policy: JobPolicy;
  logger: Logger;
  metrics?: WorkerMetrics;
  /** Per-source cool-downs and job slots, shared by every worker through Redis. */
  gate: SourceGate;
  /** Asked before each run job: a database migrated by a newer refsync is left to that refsync's workers. */
  newerSchema(): Promise<boolean>;
  /** The worker's memory budget, shared by its large lists (src/memory/). */
  memory: WorkerMemory;
  /** The worker's slots for the lists it syncs at once, in target jobs and run jobs (REFSYNC_CONCURRENCY). */
  syncSlots: SyncSlots;
  /** The sync's tuning; the defaults when absent. */
  tuning?: Partial<SyncTuning>;
  /** The worker's warnings alike (a failure every job of a source meets), one at a time. */
  repeats: QuietRepeats;
}

export type JobResult =
  | {
      kind: 'run';
      runId: number;
      slot: string;
      targets: number;
      fannedOut: boolean;
      inRunJob: number;
      /** Of inRunJob, the lists recorded unchanged by their served digest: none of their entries normalised. */
      unchangedAsServed: number;
    }
  | { kind: 'target'; runId: number; status: string; snapshotId?: number; skipped?: boolean; counts?: Record<string, number> };

/** The configured source a job names; a job for a source this worker does not have fails for good. */
export function sourceFor(deps: Pick<ProcessorDeps, 'sources'>, name: string): SourceConfig {
  const source = deps.sources.find((s) => s.name === name);
  if (!source) throw new UnrecoverableError(`source '${name}' is not configured in this worker`);
  return source;
}
