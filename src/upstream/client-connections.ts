import { errors, type Dispatcher } from 'undici';
import { leaseAgent, type AgentLease } from './shared-agents.ts';

export interface ConnectionTimeouts {
  connectMs: number;
  headersMs: number;
  /** Longest silence between two chunks of a body (undici's bodyTimeout is an idle timeout). */
  bodyMs: number;
}

export type ClientRequest = Omit<Dispatcher.RequestOptions, 'headersTimeout' | 'bodyTimeout'>;

/** How long close() waits for the client's requests in flight before it ends them. */
const CLOSE_GRACE_MS = 5000;

/**
 * One client's use of a shared agent (see leaseAgent): its own timeouts on each request, and its own
 * requests in flight, so closing the client waits for (and, after a grace period, ends) only its
 * requests, never another client's on the same sockets. A request is in flight until its response
 * body has closed (read to the end, dropped or failed).
 */
export class ClientConnections {
  readonly #lease: AgentLease;
  readonly #timeouts: ConnectionTimeouts;
  /** One controller per request in flight: a forced close aborts each. */
  readonly #inFlight = new Set<AbortController>();
  #idle: (() => void) | undefined;
  #closing: Promise<void> | undefined;

  constructor(timeouts: ConnectionTimeouts, extraCa: string[]) {
    this.#timeouts = timeouts;
    this.#lease = leaseAgent({ connectMs: timeouts.connectMs, extraCa });
  }

  async request(options: ClientRequest): Promise<Dispatcher.ResponseData> {
    // What the client's own closed agent answered before agents were shared.
    if (this.#closing) throw new errors.ClientClosedError();
    const controller = new AbortController();
    const outer = options.signal as AbortSignal | null | undefined;
    const forward = () => controller.abort(outer!.reason);
    if (outer?.aborted) forward();
    else outer?.addEventListener('abort', forward, { once: true });
    this.#inFlight.add(controller);
    const done = () => {
      outer?.removeEventListener('abort', forward);
      this.#inFlight.delete(controller);
      if (this.#inFlight.size === 0) this.#idle?.();
    };
    try {
      const res = await this.#lease.agent.request({
        ...options,
        signal: controller.signal,
        headersTimeout: this.#timeouts.headersMs,
        bodyTimeout: this.#timeouts.bodyMs,
      });
      res.body.once('close', done);
      return res;
    } catch (err) {
      done();
      throw err;
    }
  }

  /** Refuses new requests, waits for those in flight, ends them after 5 s, then gives the agent back. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#inFlight.size > 0) {
        const idle = new Promise<void>((resolve) => (this.#idle = resolve));
        const force = setTimeout(() => {
          for (const controller of this.#inFlight) controller.abort(new errors.ClientDestroyedError());
        }, CLOSE_GRACE_MS);
        force.unref();
        try {
          await idle;
        } finally {
          clearTimeout(force);
        }
      }
      await this.#lease.release();
    })();
    return this.#closing;
  }
}
