import type { Worker } from 'bullmq';
import { errorLine } from '../../util/error-line.ts';
import type { Logger } from '../../util/logger.ts';
import { settlesWithin } from '../../util/time-limit.ts';
import type { SyncJobData } from '../jobs.ts';
import type { JobResult } from '../handlers/processor.ts';

type SyncWorker = Worker<SyncJobData, JobResult>;

/**
 * The BullMQ worker taking jobs now. The watchdog may replace it with a fresh one; the one replaced
 * closes in the background and close() waits for it too.
 */
export class JobWorker {
  readonly #make: () => SyncWorker;
  readonly #logger: Logger;
  readonly #retired: Promise<void>[] = [];
  #current: SyncWorker;
  #generation = 1;

  constructor(make: () => SyncWorker, logger: Logger) {
    this.#make = make;
    this.#logger = logger;
    this.#current = make();
  }

  get current(): SyncWorker {
    return this.#current;
  }

  /** 1 for the first worker, incremented by each replace(). */
  get generation(): number {
    return this.#generation;
  }

  replace(): void {
    const old = this.#current;
    this.#current = this.#make();
    this.#generation++;
    this.#retired.push(old.close().catch((err) => this.#logger.warn({ err: errorLine(err) }, 'closing the replaced worker failed')));
  }

  /**
   * Stops taking jobs and lets the running ones finish for up to `shutdownTimeoutMs`; after that
   * they are aborted (BullMQ retries them) and given 10 s more to stop.
   */
  async close(shutdownTimeoutMs: number): Promise<void> {
    const worker = this.#current;
    const graceful = worker.close();
    if (!(await settlesWithin(graceful, shutdownTimeoutMs))) {
      this.#logger.warn({ timeoutMs: shutdownTimeoutMs }, 'jobs still running at the shutdown deadline: aborting them (they will be retried)');
      worker.cancelAllJobs('worker shutting down');
      if (!(await settlesWithin(graceful, 10_000))) throw new Error('worker: running jobs did not stop after being aborted');
    }
    await graceful;
    await Promise.allSettled(this.#retired);
  }
}
