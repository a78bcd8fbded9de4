// Names in Redis: the queue, its prefix, scheduler ids, job ids and run slots. BullMQ refuses custom
// job ids that contain ':' (it is its key separator), so ids here join their parts with '~', a
// character that no source name, list key, variant or slot may contain.
import type { AppConfig, SourceConfig } from '../../config/types.ts';

/** One queue carries every job: the per-source `run` jobs and the per-target `target` jobs. */
export const QUEUE_NAME = 'sync';

export const DEFAULT_QUEUE_PREFIX = 'refsync';

/** Redis key prefix of the queue (`REFSYNC_QUEUE_PREFIX`, default `refsync`); tests use their own. */
export function queuePrefix(env: Record<string, string | undefined> = process.env): string {
  const value = env.REFSYNC_QUEUE_PREFIX?.trim();
  return value ? value : DEFAULT_QUEUE_PREFIX;
}

/**
 * The key prefix the queue is opened with. On a Redis Cluster it is hash-tagged, `{prefix}`, so
 * every key of the queue (and refsync's own cool-down and slot keys, which start with it) hashes to
 * one slot, as BullMQ's Lua scripts need; a prefix that already carries a hash tag is kept as it is.
 * A single Redis keeps the plain prefix, so its keys stay where they were.
 */
export function queueKeyPrefix(config: Pick<AppConfig, 'redisCluster'>, prefix: string = queuePrefix()): string {
  if (!config.redisCluster || /\{[^}]+\}/.test(prefix)) return prefix;
  return `{${prefix}}`;
}

const SCHEDULER_PREFIX = 'source-';

/** The job scheduler of a source; stable across restarts, so upserting it never duplicates it. */
export function schedulerId(source: Pick<SourceConfig, 'name'>): string {
  return `${SCHEDULER_PREFIX}${source.name}`;
}

/** The id BullMQ gives the job a scheduler plans for the instant `millis` (its JobScheduler#getSchedulerNextJobId). */
export function scheduledJobId(scheduler: string, millis: number): string {
  return `repeat:${scheduler}:${millis}`;
}

/** The source a scheduler id belongs to, or undefined for a scheduler refsync did not create. */
export function sourceOfScheduler(id: string): string | undefined {
  return id.startsWith(SCHEDULER_PREFIX) ? id.slice(SCHEDULER_PREFIX.length) : undefined;
}

const slotPattern = /^[A-Za-z0-9_.-]{1,100}$/;

export function isValidSlot(slot: string): boolean {
  return slotPattern.test(slot);
}

/** The slot of a scheduled run: the instant the scheduler planned it, the same for every worker. */
export function scheduleSlot(millis: number): string {
  return `sched-${millis}`;
}

/** A fresh slot for a manual trigger: time plus randomness, so two people triggering get two runs. */
export function manualSlot(now = Date.now()): string {
  return `manual-${now}-${Math.random().toString(16).slice(2, 8)}`;
}

export function runJobId(source: string, slot: string): string {
  return `run~${source}~${slot}`;
}

export function targetJobId(source: string, listKey: string, variant: string, slot: string): string {
  return `target~${source}~${listKey}~${variant}~${slot}`;
}
