import { describe, expect, it } from 'vitest';
import type { Target } from '../../src/catalog/catalog.ts';
import type { Database } from '../../src/db/database.ts';
import type { ApplyBatch, BatchApplied } from '../../src/sync/batch/apply-batch.ts';
import type { TargetOutcome } from '../../src/sync/outcome/target-outcome.ts';
import { syncInBatches } from '../../src/sync/run/run-sync.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function targetOf(source: string, key: string): Target {
  return { source: { name: source }, list: { key }, variant: '', path: `/${key}` } as unknown as Target;
}

function unchanged(target: Target, setAside: boolean): TargetOutcome {
  const outcome = { status: 'unchanged', target, counts: {}, baseline: false, entryCount: 1, pages: 1, durationMs: 1 } as unknown as TargetOutcome;
  return setAside ? { ...outcome, setAside: true } : outcome;
}

/** A batch that records what it is told, and answers each apply with the next of `answers`. */
function recordingBatch(name: string, events: string[], answers: Array<(taken: Target[]) => BatchApplied>) {
  const done: Target[] = [];
  const appliedOn: Database[] = [];
  const batch = {
    done: (target: Target) => done.push(target),
    apply: async (db: Database) => {
      appliedOn.push(db);
      events.push(`apply ${name}`);
      return answers.shift()!(done);
    },
  } as unknown as ApplyBatch;
  return { batch, done, appliedOn };
}

const poolDb = { kind: 'pool' } as unknown as Database;
const claimDb = { kind: 'claim' } as unknown as Database;

describe('syncInBatches', () => {
  it("writes each batch after the last list, in the order its first list came, the lanes' hold given back first; a list it took is its settled outcome", async () => {
    const events: string[] = [];
    const [a1, b1, a2] = [targetOf('a', 'one'), targetOf('b', 'one'), targetOf('a', 'two')];
    const recordAll = (taken: Target[]): BatchApplied => ({ ids: new Map(taken.map((t) => [t, 100])) });
    const a = recordingBatch('a', events, [recordAll]);
    const b = recordingBatch('b', events, [recordAll]);
    const batchOf = (t: Target) => (t.source.name === 'a' ? a.batch : b.batch);
    const results = await syncInBatches([a1!, b1!, a2!], {
      lanes: 2,
      sync: async (target) => {
        await sleep(target === a1 ? 20 : 1);
        events.push(`synced ${target.source.name}/${target.list.key}`);
        // a2 is settled by its sync; the others are set aside for their batch.
        return unchanged(target, target !== a2);
      },
      batchOf,
      lanesEnded: async () => {
        events.push('lanes ended');
      },
      settle: {
        outcomeOf: (outcome) => outcome,
        settling: (batch, outcomes) => ({
          db: poolDb,
          runId: 1,
          recorded: async (outcome) => {
            events.push(`recorded ${outcome.target.source.name}/${outcome.target.list.key} as ${outcome.snapshotId}`);
            return outcome;
          },
          again: async (outcome) => outcome,
          unrecorded: async (err) => {
            throw err;
          },
          settled: async (settled) => {
            events.push(`settled ${batch === a.batch ? 'a' : 'b'}: ${settled.length} of ${outcomes.length}`);
          },
        }),
      },
    });
    expect(events.slice(0, 4).sort()).toEqual(['lanes ended', 'synced a/one', 'synced a/two', 'synced b/one'].sort());
    expect(events.indexOf('lanes ended')).toBe(3);
    expect(events.slice(4)).toEqual(['apply a', 'recorded a/one as 100', 'settled a: 2 of 2', 'apply b', 'recorded b/one as 100', 'settled b: 1 of 1']);
    expect(a.done).toEqual(expect.arrayContaining([a1, a2]));
    expect(b.done).toEqual([b1]);
    expect(results.map((r) => (r as TargetOutcome).snapshotId)).toEqual([100, 100, undefined]);
    expect(results.map((r) => (r as TargetOutcome).setAside)).toEqual([undefined, undefined, undefined]);
  });

  it('writes the batch on the database its failed unchanged statement gives, and settles its lists there', async () => {
    const events: string[] = [];
    const target = targetOf('a', 'one');
    const refused = new Error('refused');
    const a = recordingBatch('a', events, [() => ({ ids: new Map(), unrecorded: refused }), (taken) => ({ ids: new Map(taken.map((t) => [t, 7])) })]);
    const told: unknown[] = [];
    const [result] = await syncInBatches([target], {
      lanes: 1,
      sync: async () => unchanged(target, true),
      batchOf: () => a.batch,
      settle: {
        outcomeOf: (outcome) => outcome,
        settling: () => ({
          db: poolDb,
          runId: 1,
          recorded: async (outcome) => outcome,
          again: async (outcome) => outcome,
          unrecorded: async (err) => {
            told.push(err);
            return told.length === 1 ? claimDb : undefined;
          },
        }),
      },
    });
    expect(told).toEqual([refused]);
    expect(a.appliedOn).toEqual([poolDb, claimDb]);
    expect(result).toMatchObject({ snapshotId: 7 });
  });

  it('a batch of one, settled by its sync: what the sync throws comes out as thrown, its batch told, nothing written', async () => {
    const events: string[] = [];
    const target = targetOf('a', 'one');
    const a = recordingBatch('a', events, []);
    class Wait extends Error {}
    const wait = new Wait('put back');
    await expect(
      syncInBatches([target], {
        lanes: 1,
        batchOf: () => a.batch,
        sync: async () => {
          throw wait;
        },
      }),
    ).rejects.toBe(wait);
    expect(a.done).toEqual([target]);
    expect(events).toEqual([]);
  });

  it("after a result that stops the lanes starts nothing more, and a list never started is left out of its batch's settling", async () => {
    const events: string[] = [];
    const targets = [targetOf('a', 'one'), targetOf('a', 'two'), targetOf('a', 'three')];
    const a = recordingBatch('a', events, [(taken) => ({ ids: new Map(taken.map((t) => [t, 1])) })]);
    const asked: TargetOutcome[][] = [];
    const results = await syncInBatches(targets, {
      lanes: 1,
      sync: async (target) => (target === targets[1] ? ('stop' as const) : unchanged(target, true)),
      stopsAfter: (result) => result === 'stop',
      batchOf: () => a.batch,
      settle: {
        outcomeOf: (result) => (typeof result === 'object' ? result : undefined),
        settling: (_batch, outcomes) => {
          asked.push([...outcomes]);
          return { db: poolDb, runId: 1, recorded: async (o) => o, again: async (o) => o, unrecorded: async () => undefined };
        },
      },
    });
    expect(asked.map((outcomes) => outcomes.map((o) => o.target))).toEqual([[targets[0]]]);
    expect(results[1]).toBe('stop');
    expect(results[2]).toBeUndefined();
    expect(results[0]).toMatchObject({ snapshotId: 1 });
  });
});
