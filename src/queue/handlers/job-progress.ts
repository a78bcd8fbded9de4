import type { Job } from 'bullmq';
import type { PageProgress } from '../../upstream/client.ts';

/** What a target job reports to BullMQ (the dashboard shows it): pages and entries so far, and a percentage when the service states a total. */
export interface JobProgress extends PageProgress {
  percent?: number;
}

/**
 * Reports a target's fetch to BullMQ's job progress at most every `intervalMs` (each report is a
 * Redis round trip), the first one an interval after the fetch began, and once more when the fetch
 * ends unless the last report already had the final figures. A fetch shorter than the interval
 * (nearly every list, every hour) reports once: its final figures. A report that fails (Redis away)
 * is dropped: progress is a view, never a reason to fail the sync.
 */
export function jobProgressReporter(job: Pick<Job, 'updateProgress'>, intervalMs = 1_000, now: () => number = Date.now) {
  let last = now();
  let latest: JobProgress | undefined;
  let sent: JobProgress | undefined;
  const send = (progress: JobProgress) => {
    sent = progress;
    return job.updateProgress({ ...progress }).catch(() => undefined);
  };
  return {
    onProgress(progress: PageProgress): void {
      latest = { pages: progress.pages, entries: progress.entries };
      if (progress.totalEntries !== undefined) {
        latest.totalEntries = progress.totalEntries;
        latest.percent = progress.totalEntries ? Math.floor((progress.entries / progress.totalEntries) * 100) : 100;
      }
      if (progress.totalPages !== undefined) latest.totalPages = progress.totalPages;
      if (now() - last < intervalMs) return;
      last = now();
      void send(latest);
    },
    /** The final figures, whatever the interval, unless they were the last sent. */
    async finish(): Promise<void> {
      if (latest && latest !== sent) await send(latest);
    },
  };
}
