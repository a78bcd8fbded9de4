import { errorLine } from '../../util/error-line.ts';
import { closeLostTargets, type LostTargetSweep } from './lost-targets.ts';

/**
 * Looks for target jobs BullMQ failed outside the processor every `intervalMs` (see
 * lost-targets.ts), one sweep at a time; close() stops the timer and waits for a sweep under way.
 */
export function startLostTargetSweep(sweep: LostTargetSweep, intervalMs: number, stopping: () => boolean): { close(): Promise<void> } {
  let sweeping: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (sweeping || stopping()) return;
    sweeping = closeLostTargets(sweep)
      .then(
        () => undefined,
        (err) => sweep.logger.warn({ err: errorLine(err) }, 'sweep of failed target jobs failed'),
      )
      .finally(() => {
        sweeping = undefined;
      });
  }, intervalMs);
  timer.unref();
  return {
    close: async () => {
      clearInterval(timer);
      await sweeping;
    },
  };
}
