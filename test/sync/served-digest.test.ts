// The served digest (src/sync/collect/collect.ts, migration 0014): a run that read its lists'
// last ok snapshots holds a small list's answers unnormalised until they end; when their entries
// came as that snapshot's did, the fetch is set aside as unchanged with the snapshot's content hash,
// count and fields, and not one entry is normalised. Anything else is normalised as ever.
import { describe, expect, it } from 'vitest';
import { catalog, type ListDefinition, listVariant, targetsFor, type Target } from '../../src/catalog/catalog.ts';
import { ListCollector, EntryShapeError, NORMALIZING, ServedDigest } from '../../src/sync/collect/collect.ts';
import { ApplyBatch, readLastOk, UnchangedLists, type LastOk } from '../../src/sync/batch/apply-batch.ts';
import { startRun } from '../../src/sync/run/runs.ts';
import { syncTarget } from '../../src/sync/sync-target.ts';
import { silentLogger } from '../../src/util/logger.ts';
import { parseJsonText } from '../../src/upstream/list-body.ts';
import { listBatch, type ListBatch } from '../../src/upstream/list-batch.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { pipelineFixture } from './fixture.ts';

const t = useTestDatabase();
const shipmentModes = catalog.find((l) => l.key === 'shipment_modes')!;

/** A batch as the client hands it over: the entries parsed from `text`, with the text. */
const served = (text: string): ListBatch => listBatch(JSON.parse(text) as unknown[], text);

const collectorFor = (list: ListDefinition, bounds: { entries: number; chars: number; keepRaw: boolean }, spilled: unknown[][] = []) =>
  new ListCollector(list, {
    spillThreshold: 3,
    spill: async (rows) => void spilled.push(rows),
    served: bounds,
  });

type SnapshotFacts = { content_hash: string; entry_count: number; fields: string[]; served_digest: string | null; changed: boolean };
const snapshot = async (id: number): Promise<SnapshotFacts> =>
  (await t.db.query<SnapshotFacts>('select content_hash, entry_count, fields, served_digest, changed from refdata.snapshots where id = $1', [id])).rows[0]!;

describe('the served digest of a small list', () => {
  it("is seeded with the list's key rules: the same text under other key fields is another digest", () => {
    const text = '[{"code":"A","name":"a"}]';
    const digest = (list: ListDefinition) => {
      const d = new ServedDigest(list);
      d.add(text);
      return d.hex();
    };
    expect(digest(shipmentModes)).toBe(digest({ ...shipmentModes }));
    expect(digest({ ...shipmentModes, keyFields: ['name'] })).not.toBe(digest(shipmentModes));
    expect(digest({ ...shipmentModes, codeFields: ['name'] })).not.toBe(digest(shipmentModes));
  });

  it('holds the batches unnormalised, then normalises them in order: errors name the entry they named before', async () => {
    const batches = ['[{"code":"A"},{"code":"B"}]', '[{"code":"C"},7]'];
    const messages: string[] = [];
    for (const hold of [false, true]) {
      const collector = collectorFor(shipmentModes, { entries: 100, chars: 10_000, keepRaw: hold });
      const taken = (async () => {
        for (const text of batches) await collector.addBatch(served(text));
        return collector.finish();
      })();
      const err = await taken.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EntryShapeError);
      messages.push((err as Error).message);
    }
    expect(messages[1]).toBe(messages[0]);
    expect(messages[0]).toContain('entry 3 is number');
  });

  it('is offered for a set-aside only while no entry has been normalised', async () => {
    const text = '[{"code":"A"},{"code":"B"}]';
    const held = collectorFor(shipmentModes, { entries: 100, chars: 10_000, keepRaw: true });
    const normalised = collectorFor(shipmentModes, { entries: 100, chars: 10_000, keepRaw: false });
    for (const c of [held, normalised]) await c.addBatch(served(text));
    expect(held.rawDigest()).toMatch(/^[0-9a-f]{64}$/);
    expect(normalised.rawDigest()).toBeNull();
    expect(normalised.servedDigest()).toBe(held.servedDigest());
  });

  it('is none once the list passes its bounds, whose batches are then normalised and spilled as they come', async () => {
    const spilled: unknown[][] = [];
    const collector = collectorFor(shipmentModes, { entries: 2, chars: 10_000, keepRaw: true }, spilled);
    await collector.addBatch(served('[{"code":"A"},{"code":"B"}]'));
    expect(spilled).toEqual([]);
    await collector.addBatch(served('[{"code":"C"},{"code":"D"}]'));
    expect(spilled.flat()).toHaveLength(4);
    const collected = await collector.finish();
    expect(collected).toMatchObject({ servedDigest: null, entryCount: 4 });

    const long = collectorFor(shipmentModes, { entries: 100, chars: 20, keepRaw: true });
    await long.addBatch(served('[{"code":"A","description":"longer than twenty characters"}]'));
    expect((await long.finish()).servedDigest).toBeNull();

    // A batch not read from an answer has no text to digest.
    const unread = collectorFor(shipmentModes, { entries: 100, chars: 10_000, keepRaw: true });
    await unread.addBatch(listBatch([{ code: 'A' }]));
    expect((await unread.finish()).servedDigest).toBeNull();
  });

  it("is not used for a snapshot that replaced values (each fetch logs them again) nor one without fields; it must be the snapshot's own", () => {
    const target = { list: shipmentModes, variant: '' } as Target;
    const last: LastOk = { entryCount: 1, contentHash: 'h', fields: ['code:string'], servedDigest: 'd', replacedValues: 0 };
    const lists = (over: Partial<LastOk>) => new UnchangedLists(new Map([[listVariant(target), { ...last, ...over }]]));
    expect(lists({}).servedBefore(target, 'd')).toEqual({ contentHash: 'h', entryCount: 1, fields: ['code:string'] });
    expect(lists({}).servedBefore(target, 'e')).toBeUndefined();
    expect(lists({}).servedBefore(target, null)).toBeUndefined();
    expect(lists({ servedDigest: null }).servedBefore(target, 'd')).toBeUndefined();
    expect(lists({ replacedValues: 2 }).servedBefore(target, 'd')).toBeUndefined();
    expect(lists({ fields: null }).servedBefore(target, 'd')).toBeUndefined();
  });
});

/**
 * An answer with what normalising takes care over: member order, exact big numbers, escapes, wide
 * characters, nesting, an identical duplicate, a composite key's missing part (NMFC's sub code).
 */
const PINNED_ANSWER = String.raw`[
  {"item":"100","sub":"1","description":"Caf\u00e9 \"A\"","z":{"b":[1,2.50,{"c":null}],"a":true},"weight":12345678901234567891},
  {"sub":"","item":"100","description":"😀 line\nbreak","class":"55","ratio":0.10000000000000000000001},
  {"item":"200","description":"plain","class":70},
  {"item":"200","description":"plain","class":70}
]`;

describe('what normalising makes of an answer, pinned', () => {
  it('is the same content hash, count and fields as pinned here: a change to it must bump NORMALIZING (src/sync/collect/collect.ts) with this value', async () => {
    const nmfc = catalog.find((l) => l.key === 'nmfc_codes')!;
    const entries = parseJsonText(PINNED_ANSWER, { where: 'pinned', endpoint: 'pinned' }, PINNED_ANSWER.length) as unknown[];
    const collector = collectorFor(nmfc, { entries: 100, chars: 10_000, keepRaw: false });
    await collector.addBatch(listBatch(entries));
    const { contentHash, entryCount, fields } = await collector.finish();
    // Should this fail after a change to the normalising, canonical JSON or content hash of src/sync/collect/collect.ts or what they use,
    // snapshots summed up by the old code would be taken for the new code's by their served digest.
    expect({ NORMALIZING, contentHash, entryCount, fields }).toEqual({
      NORMALIZING: 1,
      contentHash: '1fea02fd0842f63d88bc731e60b85c59a8ebff3b5252eda03c9d5e2035e60878',
      entryCount: 3,
      fields: ['class:number|string', 'description:string', 'item:string', 'ratio:number', 'sub:string', 'weight:number', 'z:object'],
    });
  });
});

describe('an unchanged sync by its served digest', () => {
  it('sets a list served as before aside without normalising it, recorded with the last ok snapshot’s hash, count, fields and digest; a change is still found', async () => {
    const sb = await useSandbox();
    const fx = pipelineFixture(sb, { REFSYNC_ENVIRONMENT: 'served-env' });
    try {
      const [modes, pieces] = (['shipment_modes', 'piece_types'] as const).map((list) => targetsFor(fx.source, [list])[0]!);
      const first = new Map<Target, SnapshotFacts>();
      for (const target of [modes!, pieces!]) {
        const outcome = await syncTarget(t.db, fx.client, target, { runId: null });
        expect(outcome.status).toBe('changed');
        first.set(target, await snapshot(outcome.snapshotId!));
        expect(first.get(target)!.served_digest).toMatch(/^[0-9a-f]{64}$/);
      }
      expect(first.get(modes!)!.served_digest).not.toBe(first.get(pieces!)!.served_digest);

      const run = await startRun(t.db, { source: fx.source, trigger: 'schedule', targetsTotal: 2, slot: 'served-1' });
      const batch = new ApplyBatch(await readLastOk(t.db, 'served-env'), { db: t.db, logger: silentLogger });
      sb.control.modifyEntry('piece_types', 'PALLET', { description: 'Pallet, patched' });
      const asBefore = await syncTarget(t.db, fx.client, modes!, { runId: run.id, batch });
      expect(asBefore).toMatchObject({ status: 'unchanged', setAside: true, asServedBefore: true, entryCount: first.get(modes!)!.entry_count, pages: 1 });
      const changed = await syncTarget(t.db, fx.client, pieces!, { runId: run.id, batch });
      expect(changed).toMatchObject({ status: 'changed', counts: { modified: 1 } });
      expect(changed.asServedBefore).toBeUndefined();
      expect((await snapshot(changed.snapshotId!)).served_digest).not.toBe(first.get(pieces!)!.served_digest);

      const recorded = (await batch.apply(t.db, run.id)).ids;
      expect(await snapshot(recorded.get(modes!)!)).toEqual({ ...first.get(modes!)!, changed: false });
    } finally {
      await fx.client.close();
    }
  });

  it('in `refsync sync`: the second sync of every list sets each aside by its digest, and the data stays as it was', async () => {
    const sb = await useSandbox();
    const fx = pipelineFixture(sb, { REFSYNC_ENVIRONMENT: 'served-cli-env' });
    try {
      const first = await fx.sync(t.db);
      expect(first.status).toBe('succeeded');
      const rowsBefore = await t.db.query("select count(*)::int as n from refdata.entries where environment = 'served-cli-env'");
      const changesBefore = await t.db.query("select count(*)::int as n from refdata.entry_changes where environment = 'served-cli-env'");
      const again = await fx.sync(t.db);
      expect(again.status).toBe('succeeded');
      expect(again.outcomes.length).toBeGreaterThan(15);
      for (const outcome of again.outcomes) expect(outcome).toMatchObject({ status: 'unchanged', asServedBefore: true });
      const { rows } = await t.db.query<{ same: boolean }>(
        `select bool_and(s.content_hash = p.content_hash and s.served_digest = p.served_digest and s.entry_count = p.entry_count and s.fields = p.fields) as same
         from refdata.snapshots s join refdata.snapshots p on (p.environment, p.list_key, p.variant) = (s.environment, s.list_key, s.variant) and p.run_id = $1
         where s.run_id = $2`,
        [first.runId, again.runId],
      );
      expect(rows[0]!.same).toBe(true);
      expect(await t.db.query("select count(*)::int as n from refdata.entries where environment = 'served-cli-env'")).toMatchObject({ rows: rowsBefore.rows });
      // Recorded without a diff: no change rows, and every snapshot of the second run unchanged.
      expect(await t.db.query("select count(*)::int as n from refdata.entry_changes where environment = 'served-cli-env'")).toMatchObject({
        rows: changesBefore.rows,
      });
      const { rows: second } = await t.db.query<{ status: string; changed: boolean }>(
        'select distinct status, changed from refdata.snapshots where run_id = $1',
        [again.runId],
      );
      expect(second).toEqual([{ status: 'ok', changed: false }]);
    } finally {
      await fx.client.close();
    }
  });
});
