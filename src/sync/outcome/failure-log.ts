// How list failures reach the log. A worker's target jobs each log their own; an in-process run
// (`refsync sync`, `demo`) holds them to its end and logs each error once with the lists it
// stopped, so an untrusted certificate, a refused login or an unreachable host is one warning, not
// one per list.
import { listVariant, type Target } from '../../catalog/targets.ts';
import type { Logger } from '../../util/logger.ts';

export type ListFailure = Error & { code: string };

export interface FailureLog {
  failed(target: Target, failure: ListFailure): void;
  /** Logs what was held back; a log that holds nothing has nothing to do. */
  flush(): void;
}

/** Each failure logged when it comes. */
export function eachFailureLog(logger: Logger): FailureLog {
  return {
    failed: (target, failure) => logger.warn({ target: listVariant(target), code: failure.code, err: failure.message }, 'list failed'),
    flush: () => undefined,
  };
}

interface SharedFailure {
  environment: string;
  code: string;
  message: string;
  targets: string[];
}

/** Failures held until flush, then one line per error (per environment, code and message) naming every list it stopped. */
export function groupedFailureLog(logger: Logger): FailureLog {
  const groups = new Map<string, SharedFailure>();
  return {
    failed(target, failure) {
      const environment = target.source.environment;
      const key = JSON.stringify([environment, failure.code, failure.message]);
      const group = groups.get(key) ?? { environment, code: failure.code, message: failure.message, targets: [] };
      group.targets.push(listVariant(target));
      groups.set(key, group);
    },
    flush() {
      for (const g of groups.values()) {
        const fields = { environment: g.environment, code: g.code, err: g.message };
        if (g.targets.length === 1) logger.warn({ ...fields, target: g.targets[0] }, 'list failed');
        else logger.warn({ ...fields, targets: g.targets }, `${g.targets.length} lists failed with the same error`);
      }
      groups.clear();
    },
  };
}
