// A streamed list has no fixed body cap. What bounds it instead are bytes per
// entry, entries per list and bytes per list; the defaults admit a million-entry bare array (the
// old 64 MiB cap failed it), and an endless or oversized body is still stopped with a list error
// naming the limit and its setting, the list's last good data untouched.
import { beforeAll, describe, expect, it } from 'vitest';
import { limitsOf } from '../../src/config/source-limits.ts';
import { generatedNmfc } from '../../src/sandbox/data/nmfc.ts';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox, type Sandbox } from '../helpers/sandbox.ts';
import { changeList, expectFailedThenRecovered, faultSource } from './harness.ts';

const t = useTestDatabase();
let sb: Sandbox;
beforeAll(async () => {
  sb = await useSandbox();
});

const MILLION = 1_000_000;
const OLD_CAP = 64 * 2 ** 20;

describe('no fixed body cap on a streamed list', () => {
  it('the default limits admit a million-entry bare array of the sandbox, and the client streams one whole (~100 MB)', async () => {
    // By arithmetic: the largest generated entry (the longest numbers and words), and a comma each.
    const entryBytes = Math.max(...[0, 9, 99_999, 999_999, 777_777].map((i) => Buffer.byteLength(JSON.stringify(generatedNmfc(i))))) + 1;
    const defaults = limitsOf({});
    expect(defaults.maxListEntries).toBeGreaterThanOrEqual(MILLION);
    expect(defaults.maxEntryBytes).toBeGreaterThanOrEqual(entryBytes);
    expect(defaults.maxListBytes).toBeGreaterThanOrEqual(MILLION * entryBytes);

    // And for real, through the upstream client with its default limits: the part the cap was in.
    sb.control.setPaging('nmfc_codes', 'array');
    sb.control.setGenerated('nmfc_codes', MILLION);
    try {
      const fx = faultSource(sb, t.db, { REFSYNC_LISTS: 'nmfc_codes' }, { timeouts: { connectMs: 2000, headersMs: 10_000, bodyMs: 10_000 } });
      let entries = 0;
      let bytes = 0;
      for await (const batch of fx.client.pages({ basePath: '/v2', path: '/shipments/nmfc/' })) {
        entries += batch.entries.length;
        for (const entry of batch.entries) bytes += Buffer.byteLength(JSON.stringify(entry)) + 1;
      }
      expect(entries).toBe(MILLION);
      expect(bytes, 'the body is larger than the old fixed cap').toBeGreaterThan(OLD_CAP);
    } finally {
      sb.control.setPaging('nmfc_codes', 'envelope');
      sb.control.setGenerated('nmfc_codes', 40);
    }
  });
});

describe('what still stops a hostile body', () => {
  const cases = [
    {
      what: 'an endless bare array',
      setting: 'REFSYNC_MAX_LIST_ENTRIES',
      value: '5000',
      shape: 'array' as const,
      fault: 'endless',
      names: /the list has more than 5000 entries, the limit of REFSYNC_MAX_LIST_ENTRIES; refused/,
    },
    {
      what: 'an endless results array',
      setting: 'REFSYNC_MAX_LIST_BYTES',
      value: '1000000',
      shape: 'envelope' as const,
      fault: 'endless',
      names: /the list's answers exceed 1000000 bytes in all, the limit of REFSYNC_MAX_LIST_BYTES; refused/,
    },
    {
      what: 'one huge entry',
      setting: 'REFSYNC_MAX_ENTRY_BYTES',
      value: '65536',
      shape: 'array' as const,
      fault: 'huge',
      names: /an entry is longer than 65536 bytes, the limit of REFSYNC_MAX_ENTRY_BYTES; refused/,
    },
  ];
  it.each(cases)('$what is stopped at $setting; the list keeps its last good data; the next run heals', async ({ setting, value, shape, fault, names }) => {
    sb.control.setPaging('piece_types', shape);
    try {
      const fx = faultSource(sb, t.db, { [setting]: value });
      expect((await fx.sync()).status).toBe('succeeded');
      const before = fx.served();
      changeList(sb, 'piece_types');
      sb.control.setFaults(fault === 'endless' ? { endlessBody: { list: 'piece_types' } } : { hugeBody: { list: 'piece_types', bytes: 4 * 2 ** 20 } });
      const run = await fx.sync();
      const outcome = await expectFailedThenRecovered(sb, t.db, fx, 'piece_types', before, run, 'size');
      expect(outcome.error).toMatch(names);
    } finally {
      sb.control.setPaging('piece_types', 'envelope');
    }
  });
});
