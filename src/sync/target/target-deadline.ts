import { listVariant, type Target } from '../../catalog/targets.ts';
import { ListFailure } from '../../util/error-codes.ts';

/** A target past REFSYNC_TARGET_DEADLINE_S: a failure of its list, recorded, never retried (it would take as long). */
export class TargetDeadlineError extends ListFailure {
  readonly code = 'deadline';
}

/**
 * The deadline of one target, all its pages and its write (REFSYNC_TARGET_DEADLINE_S). When it
 * passes, its signal aborts the fetch (the request in flight included) and `refusal` makes the
 * target's connection refuse every further statement but a rollback, so the write stops at its
 * next statement and nothing is committed. The caller's own signal (a shutdown) still aborts too.
 */
export class TargetDeadline {
  readonly signal: AbortSignal;
  readonly #timer: NodeJS.Timeout;
  readonly #seconds: number;
  readonly #target: Target;
  #error: TargetDeadlineError | undefined;
  #expired = false;

  constructor(seconds: number, target: Target, outer?: AbortSignal) {
    this.#seconds = seconds;
    this.#target = target;
    const controller = new AbortController();
    this.#timer = setTimeout(() => {
      this.#expired = true;
      controller.abort(this.error);
    }, seconds * 1000);
    this.#timer.unref();
    this.signal = outer ? AbortSignal.any([outer, controller.signal]) : controller.signal;
  }

  /** Made when first asked for: an Error takes its stack when made, and nearly every target ends well before. */
  get error(): TargetDeadlineError {
    this.#error ??= new TargetDeadlineError(
      `${listVariant(this.#target)}: not synced within the target deadline of ${this.#seconds} s (REFSYNC_TARGET_DEADLINE_S: all its pages and its write); stopped, nothing written`,
    );
    return this.#error;
  }

  get expired(): boolean {
    return this.#expired;
  }

  /** The error a statement of the target's write gets once the deadline has passed; undefined before. */
  readonly refusal = (): Error | undefined => (this.#expired ? this.error : undefined);

  clear(): void {
    clearTimeout(this.#timer);
  }
}
