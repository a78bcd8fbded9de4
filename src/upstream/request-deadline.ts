import { DeadlineError } from './errors.ts';

/**
 * The deadline of one request, from its first byte sent to its body's last byte read
 * (REFSYNC_REQUEST_DEADLINE_S). undici's timeouts measure silences only, so an answer that drips
 * a byte at a time would hold a target forever without it. Its signal aborts the request (and the
 * caller's own signal still does); whoever reads the body last clears it.
 */
export class RequestDeadline {
  readonly signal: AbortSignal;
  readonly #timer: NodeJS.Timeout;

  constructor(ms: number, ctx: { where: string; endpoint: string }, outer?: AbortSignal) {
    const controller = new AbortController();
    this.#timer = setTimeout(() => {
      const message = `${ctx.where}: no whole answer within the request deadline of ${ms / 1000} s (REFSYNC_REQUEST_DEADLINE_S: first byte sent to last byte read)`;
      controller.abort(new DeadlineError(message, { endpoint: ctx.endpoint }));
    }, ms);
    this.#timer.unref();
    this.signal = outer ? AbortSignal.any([outer, controller.signal]) : controller.signal;
  }

  clear(): void {
    clearTimeout(this.#timer);
  }
}
