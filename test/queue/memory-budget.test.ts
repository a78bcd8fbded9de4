// The worker's memory budget, in one worker process with a budget that holds one large list at a
// time: the small lists of a first sync are synced in their run job, which stops each large list's
// fetch once it proves large, before it asks the budget for anything, and leaves it to a target
// job; the two large lists then run one after the other (the second stops its fetch and waits for
// the first to be written). Once their sizes are known, the same two lists fit the budget together
// and run side by side. Asserted on the order of the worker's own log lines, never on times.
import { describe, expect, it } from 'vitest';
import { enqueueManualRuns } from '../../src/queue/jobs.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { captureLogs } from '../helpers/logs.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { startTestWorker, waitFor, workerConfig, testQueuePrefix } from './helpers.ts';

const tdb = useTestDatabase();
const LARGE = ['accessorials', 'nmfc_codes'];
const SMALL = ['document_types', 'hazmat', 'location_types', 'piece_types', 'shipment_modes'];

interface Line {
  msg: string;
  list?: string;
  target?: string;
  status?: string;
}

/** The memory and target lines of the worker's log, in order, as `event list` strings. */
function journal(lines: string[]): string[] {
  const out: string[] = [];
  for (const text of lines) {
    const line = JSON.parse(text) as Line;
    const list = (line.list ?? line.target ?? '').split('/')[1]?.replace(/:$/, '');
    if (line.msg === 'large list admitted to the memory budget') out.push(`admitted ${list}`);
    else if (line.msg === 'large list waits for the memory budget') out.push(`waiting ${list}`);
    else if (line.msg === 'large list released its memory budget') out.push(`released ${list}`);
    else if (line.msg === 'target synced') out.push(`synced ${list}`);
  }
  return out;
}

async function runStatus(slot: string): Promise<string | undefined> {
  const { rows } = await tdb.db.query<{ status: string }>('select status from refdata.sync_runs where slot = $1', [slot]);
  return rows[0]?.status;
}

describe('the memory budget of one worker', () => {
  it('runs two large first loads one after the other and the small lists beside them; known sizes that fit run together', async () => {
    const sandbox = await useSandbox();
    sandbox.control.setLatency(40);
    for (const list of LARGE) {
      sandbox.control.setGenerated(list, 3000);
      sandbox.control.setPaging(list, 'next', { maxPageSize: 100 });
    }
    // 200 MiB leaves 8 MiB for large lists: a list never synced counts as a million entries (244
    // MiB), so it runs alone; at 3,000 entries known, each counts 0.7 MiB and both fit.
    const config = workerConfig(sandbox, tdb.url, { REFSYNC_LISTS: [...LARGE, ...SMALL].join(','), REFSYNC_CONCURRENCY: '3', REFSYNC_MEMORY_BUDGET_MB: '200' });
    const logs = captureLogs('debug');
    // 500 entries make a list large here, as 5,000 do by default.
    const worker = await startTestWorker(config, testQueuePrefix(), { logger: logs.logger, tuning: { indexAfterEntries: 500, spillThreshold: 1000 } });

    await enqueueManualRuns(worker.queue, config.sources, { slot: 'mem-1' });
    await waitFor(async () => (await runStatus('mem-1')) === 'succeeded', 'the first run to succeed', 60_000);
    const first = journal(logs.lines);
    const admitted = first.filter((e) => e.startsWith('admitted '));
    expect(admitted.map((e) => e.split(' ')[1]).sort()).toEqual(LARGE);
    const [a, b] = admitted.map((e) => e.split(' ')[1]!);
    const at = (event: string) => first.indexOf(event);
    // One after the other: the second asked while the first held the budget, and was let in only
    // once the first had been written and let go.
    expect(at(`waiting ${b}`)).toBeGreaterThan(at(`admitted ${a}`));
    expect(at(`waiting ${b}`)).toBeLessThan(at(`released ${a}`));
    expect(at(`admitted ${b}`)).toBeGreaterThan(at(`released ${a}`));
    expect(at(`synced ${a}`)).toBeLessThan(at(`admitted ${b}`));
    // Before: every small list synced in the run job, none of them waiting for the large ones.
    for (const small of SMALL) {
      expect(at(`synced ${small}`)).toBeGreaterThanOrEqual(0);
      expect(at(`synced ${small}`)).toBeLessThan(at(`admitted ${a}`));
    }
    expect(first.filter((e) => e.startsWith('waiting ')).map((e) => e.split(' ')[1])).toEqual([b]);
    expect(
      first
        .filter((e) => e.startsWith('synced '))
        .map((e) => e.split(' ')[1])
        .sort(),
    ).toEqual([...LARGE, ...SMALL].sort());

    // The second slot: both lists are known at 3,000 entries, ask before their fetch, and fit together.
    logs.lines.length = 0;
    await enqueueManualRuns(worker.queue, config.sources, { slot: 'mem-2' });
    await waitFor(async () => (await runStatus('mem-2')) === 'succeeded', 'the second run to succeed', 60_000);
    const second = journal(logs.lines);
    const firstRelease = second.findIndex((e) => e.startsWith('released '));
    expect(second.slice(0, firstRelease).filter((e) => e.startsWith('admitted ')).length).toBe(2);
    expect(second.filter((e) => e.startsWith('waiting '))).toEqual([]);
  }, 120_000);
});
