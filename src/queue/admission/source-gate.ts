// Each source is its own failure domain on the one shared queue. A 429 cools down that source
// alone, for every worker (the cool-down lives in Redis), and no source holds more than its share
// of the job slots at once, so an account with many lists, a slow one or a rate-limited one cannot
// hold up the others. The state is two small keys per source under the queue's prefix (on a
// cluster the prefix is hash-tagged, so they live in the queue's slot).
import type { RedisClient } from '../redis/connection.ts';

/** A slot is held for this long unless renewed: a worker that died frees its slots by itself. */
const LEASE_MS = 60_000;
/** How long a job waits before asking again when its source's slots are all taken. */
const BUSY_RETRY_MS = 1_000;

// KEYS[1]: the source's cool-down, KEYS[2]: its slots (sorted set: job id -> lease end). ARGV: now,
// lease end, job id, limit ('' for none). Returns minus the cool-down's milliseconds left while it
// cools down, else 1 (admitted) or 0 (every slot taken): the two checks in one round trip, every job.
// Expired leases are dropped first; a job that already holds a slot (a retried attempt) keeps it.
const ADMIT = `
local cooling = redis.call('pttl', KEYS[1])
if cooling > 0 then return -cooling end
if ARGV[4] == '' then return 1 end
redis.call('zremrangebyscore', KEYS[2], '-inf', ARGV[1])
if redis.call('zscore', KEYS[2], ARGV[3]) or redis.call('zcard', KEYS[2]) < tonumber(ARGV[4]) then
  redis.call('zadd', KEYS[2], ARGV[2], ARGV[3])
  redis.call('pexpireat', KEYS[2], ARGV[2])
  return 1
end
return 0`;

export interface SourceSlot {
  /** Gives the slot back (idempotent). */
  release(): Promise<void>;
}

export type Admission = { admitted: true; slot: SourceSlot } | { admitted: false; waitMs: number; reason: 'cooling down' | 'busy' };

export class SourceGate {
  readonly #redis: RedisClient;
  readonly #prefix: string;

  constructor(redis: RedisClient, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  #key(kind: 'cooldown' | 'slots', source: string): string {
    return `${this.#prefix}:refsync:${kind}:${source}`;
  }

  /** Holds back every job of the source, on every worker, for ms (a longer cool-down already set stays). */
  async coolDown(source: string, ms: number): Promise<void> {
    const key = this.#key('cooldown', source);
    const until = Date.now() + ms;
    // NX then GT: the key is made when absent, and otherwise only ever lengthened.
    await this.#redis.multi().set(key, String(until), 'PX', ms, 'NX').pexpireat(key, until, 'GT').exec();
  }

  /**
   * Lets a job of the source run now, or says how long it should wait: while the source cools
   * down, or while `limit` of its jobs already run (no limit when undefined).
   */
  async admit(source: string, jobId: string, limit: number | undefined): Promise<Admission> {
    const key = this.#key('slots', source);
    const now = Date.now();
    const got = Number(await this.#redis.eval(ADMIT, 2, this.#key('cooldown', source), key, now, now + LEASE_MS, jobId, limit ?? ''));
    if (got < 0) return { admitted: false, waitMs: -got, reason: 'cooling down' };
    if (limit === undefined) return { admitted: true, slot: { release: async () => undefined } };
    // Jitter spreads the retries of many waiting jobs, so they do not all ask at once.
    if (got !== 1) return { admitted: false, waitMs: BUSY_RETRY_MS + Math.floor(Math.random() * BUSY_RETRY_MS), reason: 'busy' };
    return { admitted: true, slot: this.#held(key, jobId) };
  }

  /** A held slot, its lease renewed while the job runs. */
  #held(key: string, jobId: string): SourceSlot {
    const renew = setInterval(() => {
      const until = Date.now() + LEASE_MS;
      this.#redis
        .multi()
        .zadd(key, 'XX', until, jobId)
        .pexpireat(key, until, 'GT')
        .exec()
        .catch(() => undefined);
    }, LEASE_MS / 3);
    renew.unref();
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        clearInterval(renew);
        await this.#redis.zrem(key, jobId);
      },
    };
  }
}
