// Everything a running sandbox holds: its data, fault switches, accounts and tokens, latency,
// and the request log. reset() brings all of it but the log and the issued tokens back to start.
import { AuthService } from './auth.ts';
import { FaultState } from './faults.ts';
import { DataStore } from './store.ts';
import { SandboxError } from './types.ts';
import type { RequestLogEntry, SandboxAccount } from './types.ts';

/** The request log keeps the most recent entries only, so a long benchmark does not grow without bound. */
const MAX_LOG = 200_000;

export class SandboxState {
  readonly store = new DataStore();
  readonly faults = new FaultState();
  readonly auth: AuthService;
  latencyMs: number;
  private readonly initialLatencyMs: number;
  private log: RequestLogEntry[] = [];
  requests = 0;

  constructor(accounts: readonly SandboxAccount[], latencyMs = 0) {
    this.auth = new AuthService(accounts);
    this.setLatency(latencyMs);
    this.latencyMs = latencyMs;
    this.initialLatencyMs = latencyMs;
  }

  setLatency(ms: number): void {
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) throw new SandboxError('latency must be a non-negative number of milliseconds');
    this.latencyMs = ms;
  }

  /** Adds a log entry and returns it, so the handler can fill in the status when it sends one. */
  record(entry: RequestLogEntry): RequestLogEntry {
    this.log.push(entry);
    if (this.log.length > MAX_LOG) this.log.splice(0, this.log.length - MAX_LOG);
    return entry;
  }

  requestLog(): RequestLogEntry[] {
    return this.log.map((e) => ({ ...e }));
  }

  resetRequestLog(): void {
    this.log = [];
  }

  reset(): void {
    this.store.reset();
    this.faults.clear();
    this.auth.reset();
    this.latencyMs = this.initialLatencyMs;
  }
}
