// Warnings that many lists or jobs raise alike, said once at a time. When a source's host is down or
// Postgres refuses, every list, every retry and every job attempt fails the same way within seconds,
// and a warning each said one thing dozens of times. The first warning of a kind stands for the
// ones alike that follow within a quiet spell: those go to debug, and are counted in the next warning
// of that kind after it. Nothing else changes: jobs still retry, metrics still count every one.
import type { Logger } from './logger.ts';

/** How long a warning stands for the ones alike after it. */
export const QUIET_MS = 60_000;

export class QuietRepeats {
  readonly #quietMs: number;
  readonly #now: () => number;
  /** Per kind: until when its warnings are quiet, and how many were quiet since its last one. */
  readonly #kinds = new Map<string, { quietUntil: number; quiet: number }>();

  constructor(quietMs = QUIET_MS, now: () => number = () => performance.now()) {
    this.#quietMs = quietMs;
    this.#now = now;
  }

  get quietSeconds(): number {
    return Math.round(this.#quietMs / 1000);
  }

  /**
   * Warns on `logger`, or logs at debug when a warning of the same `kind` (compared as JSON) was
   * given within the quiet spell. A warning carries `quietRepeats`, the count of its kind's debug lines since the last.
   */
  warn(logger: Logger, kind: unknown, fields: Record<string, unknown>, msg: string): void {
    this.#say('warn', logger, kind, fields, msg);
  }

  /** As warn, for a line at info: the first of its kind at info, the ones alike after it at debug. */
  info(logger: Logger, kind: unknown, fields: Record<string, unknown>, msg: string): void {
    this.#say('info', logger, kind, fields, msg);
  }

  #say(level: 'warn' | 'info', logger: Logger, kind: unknown, fields: Record<string, unknown>, msg: string): void {
    const key = JSON.stringify(kind);
    const now = this.#now();
    this.#forgetPast(now);
    const seen = this.#kinds.get(key);
    if (seen && now < seen.quietUntil) {
      seen.quiet += 1;
      logger.debug(fields, msg);
      return;
    }
    this.#kinds.set(key, { quietUntil: now + this.#quietMs, quiet: 0 });
    logger[level]({ ...fields, ...(seen?.quiet ? { quietRepeats: seen.quiet } : {}), repeatsAtDebugForS: this.quietSeconds }, msg);
  }

  /** Drops the kinds long past, so a process that runs for months keeps only recent ones. */
  #forgetPast(now: number): void {
    for (const [key, seen] of this.#kinds) if (now >= seen.quietUntil + this.#quietMs) this.#kinds.delete(key);
  }
}
