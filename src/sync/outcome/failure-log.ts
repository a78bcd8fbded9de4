// How list failures reach the log. A worker's target jobs each log their own, those alike quiet for
// a while after the first (src/util/quiet-repeats.ts); an in-process run (`refsync sync`, `demo`)
// holds them to its end and logs each error once with the lists it stopped, so an untrusted
// certificate, a refused login or an unreachable host is one warning, not one per list.
import { listVariant, type Target } from '../../catalog/targets.ts';
import { groupAlike } from '../../util/alike.ts';
import { causeOf, sharedMessage } from '../../util/failure-cause.ts';
import type { Logger } from '../../util/logger.ts';
import type { QuietRepeats } from '../../util/quiet-repeats.ts';

export type ListFailure = Error & { code: string };

export interface FailureLog {
  failed(target: Target, failure: ListFailure): void;
  /** Logs what was held back; a log that holds nothing has nothing to do. */
  flush(): void;
}

/**
 * Each failure logged when it comes. With `repeats` (a worker's), a failure alike to one warned
 * of within its quiet spell (the same source, code and cause: every list's job stopped by one
 * unreachable host) is logged at debug, and counted in the next warning.
 */
export function eachFailureLog(logger: Logger, repeats?: QuietRepeats): FailureLog {
  // A job's logger names its target already: said twice, the line had two `target` keys.
  const named = 'target' in logger.bindings();
  return {
    failed(target, failure) {
      const fields = { ...(named ? {} : { target: listVariant(target) }), code: failure.code, err: failure.message };
      if (!repeats) return logger.warn(fields, 'list failed');
      repeats.warn(logger, ['list failed', target.source.name, failure.code, causeOf(failure.message, failure.code)], fields, 'list failed');
    },
    flush: () => undefined,
  };
}

/** Failures held until flush, then one line per cause (per environment, code and cause: failure-cause.ts) naming every list it stopped. */
export function groupedFailureLog(logger: Logger): FailureLog {
  let held: { target: Target; failure: ListFailure }[] = [];
  return {
    failed(target, failure) {
      held.push({ target, failure });
    },
    flush() {
      for (const group of groupAlike(held, (f) => [f.target.source.environment, f.failure.code, causeOf(f.failure.message, f.failure.code)])) {
        const { target, failure } = group[0]!;
        const fields = { environment: target.source.environment, code: failure.code, err: sharedMessage(group.map((f) => f.failure.message)) };
        const targets = group.map((f) => listVariant(f.target));
        if (targets.length === 1) logger.warn({ ...fields, target: targets[0] }, 'list failed');
        else logger.warn({ ...fields, targets }, `${targets.length} lists failed with the same error`);
      }
      held = [];
    },
  };
}
