import { describe, expect, it } from 'vitest';
import { EntryTooLongError, ListSplitter, type BatchLimits, type SplitEnd } from '../../src/upstream/list-body.ts';

// Entries with what a byte-level split can get wrong: quotes, backslashes and escapes in strings,
// brackets and commas inside strings, multi-byte UTF-8 (2, 3 and 4 bytes), numbers of every form.
const entries = [
  { code: 'A1', description: 'plain', n: 1 },
  { code: 'A,2]', description: 'comma, ] and } inside a string {[', n: -0.5 },
  { code: 'A3', description: 'quote \\" and backslash \\\\ and \\u00e9 escape', n: 1.25e-7 },
  // biome-ignore lint/correctness/noPrecisionLoss: a number past 2^53 is what the splitter must pass through
  { code: 'A4', description: 'déjà vu ✓ 𝄞 😀 ünïcödé', n: 12345678901234567891 },
  { code: 'A5', nested: { deep: [[1, [2, { x: '"]' }]], {}], empty: [] }, flag: true, none: null },
  { code: 'A6', description: '\\\\', tail: '\\\\\\"' },
];
const arrayText = ` \n[ ${entries.map((e) => JSON.stringify(e).replace(/,/g, ', ')).join(' ,\n')} ]\n `;
const envelopeText = `{"count": 6, "next": null, "results": ${arrayText}, "total_count": 6, "meta": {"results": [1, 2]}}`;

/** Feeds `text` cut at `cuts` (byte offsets) and returns every element of every batch, and the end. */
function split(
  text: string,
  cuts: number[],
  limits: BatchLimits = { entries: 1, minBytes: 0, maxBytes: Infinity },
): { items: unknown[]; batches: number; end: SplitEnd } {
  const bytes = Buffer.from(text);
  const splitter = new ListSplitter(limits);
  const items: unknown[] = [];
  let batches = 0;
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    for (const batch of splitter.push(bytes.subarray(from, cut))) {
      batches++;
      items.push(...(JSON.parse(batch) as unknown[]));
    }
    from = cut;
  }
  return { items, batches, end: splitter.end() };
}

describe('ListSplitter', () => {
  const expected = JSON.parse(arrayText) as unknown[];
  const length = Buffer.byteLength(arrayText);

  it('a bare array cut at every byte boundary gives exactly what JSON.parse gives', () => {
    for (let cut = 0; cut <= length; cut++) {
      const { items, end } = split(arrayText, [cut]);
      expect(items, `cut at ${cut}`).toEqual(expected);
      expect(end).toEqual({ shape: 'array' });
    }
  });

  it('a bare array fed one byte at a time, and in batches of every size, by entries and bytes', () => {
    const everyByte = Array.from({ length }, (_, i) => i);
    expect(split(arrayText, everyByte).items).toEqual(expected);
    const cases: Array<[BatchLimits, number]> = [
      [{ entries: 1, minBytes: 0, maxBytes: Infinity }, entries.length],
      [{ entries: 4, minBytes: 0, maxBytes: Infinity }, 2],
      [{ entries: 1, minBytes: 10_000, maxBytes: Infinity }, 1],
      [{ entries: 1000, minBytes: 0, maxBytes: Infinity }, 1],
      [{ entries: 1000, minBytes: 0, maxBytes: 1 }, entries.length],
      [{ entries: 1000, minBytes: 0, maxBytes: 10_000 }, 1],
    ];
    for (const [limits, batches] of cases) {
      const got = split(arrayText, [7, 31, 100], limits);
      expect(got.items).toEqual(expected);
      expect(got.batches, JSON.stringify(limits)).toBe(batches);
    }
  });

  it('an envelope: the results stream, every other member stays in its text with results emptied', () => {
    const whole = JSON.parse(envelopeText) as Record<string, unknown>;
    const total = Buffer.byteLength(envelopeText);
    for (let cut = 0; cut <= total; cut++) {
      const { items, end } = split(envelopeText, [cut]);
      expect(items, `cut at ${cut}`).toEqual(whole.results);
      if (end.shape !== 'envelope') throw new Error(`cut at ${cut}: shape ${end.shape}`);
      expect(JSON.parse(end.envelope)).toEqual({ ...whole, results: [] });
    }
  });

  it('a results key spelled with an escape is the results key', () => {
    const { items, end } = split('{"res\\u0075lts":[{"a":1},{"a":2}],"next":null}', [5, 12]);
    expect(items).toEqual([{ a: 1 }, { a: 2 }]);
    expect(end).toEqual({ shape: 'envelope', envelope: '{"res\\u0075lts":[],"next":null}' });
  });

  it('empty arrays and envelopes give no batch', () => {
    expect(split('[]', [1])).toEqual({ items: [], batches: 0, end: { shape: 'array' } });
    expect(split('[ \n ]', [2])).toEqual({ items: [], batches: 0, end: { shape: 'array' } });
    expect(split('{"results":[ ]}', [])).toMatchObject({ batches: 0, end: { shape: 'envelope', envelope: '{"results":[]}' } });
  });

  it('anything but an array or an object is handed back whole', () => {
    expect(split(' null', [2]).end).toEqual({ shape: 'other', text: ' null' });
    expect(split('<html>', [3]).end).toEqual({ shape: 'other', text: '<html>' });
    expect(split('', []).end).toEqual({ shape: 'other', text: '' });
  });

  it('what cannot be JSON is refused, however it is cut', () => {
    const bad: Array<[string, RegExp]> = [
      ['[{"a":1},{"a":2}', /truncated/],
      ['[{"a":"unterminated]', /truncated/],
      ['[{"a":1},,{"a":2}]', /empty element/],
      ['[,{"a":1}]', /empty element/],
      ['[{"a":1},]', /trailing comma/],
      ['[{"a":1}] [2]', /after the JSON value/],
      ['[{"a":1}]]', /after the JSON value/],
      ['{"results":[{"a":1}],"results":[{"a":2}]}', /more than one 'results'/],
    ];
    for (const [text, message] of bad) {
      for (let cut = 0; cut <= text.length; cut++) {
        expect(() => split(text, [cut]), `${text} cut at ${cut}`).toThrow(message);
      }
    }
  });

  it('a malformed element is left whole to JSON.parse, which refuses it', () => {
    expect(() => split('[{"a":1}, {"a" 2}]', [4])).toThrow(SyntaxError);
  });

  describe('bytes per entry (what the splitter ever holds, whatever the body)', () => {
    const longest = Math.max(...entries.map((e) => Buffer.byteLength(JSON.stringify(e).replace(/,/g, ', '))));
    const cutEveryByte = (text: string) => Array.from({ length: Buffer.byteLength(text) }, (_, i) => i);
    const tooLong = (text: string, maxEntryBytes: number, cuts: number[] = [7, 31, 100]) => {
      try {
        split(text, cuts, { entries: 1, minBytes: 0, maxBytes: Infinity, maxEntryBytes });
      } catch (err) {
        if (err instanceof EntryTooLongError) return err.what;
        throw err;
      }
      return undefined;
    };

    it('an array or envelope whose entries fit is split as before, fed whole or a byte at a time', () => {
      // Room for the longest entry with the blanks around it, no more.
      for (const text of [arrayText, envelopeText]) {
        expect(tooLong(text, longest + 4)).toBeUndefined();
        expect(tooLong(text, longest + 4, cutEveryByte(text))).toBeUndefined();
      }
    });

    it('an entry longer than the limit is refused, ended or not (a string that never closes)', () => {
      expect(tooLong(arrayText, longest - 1)).toBe('entry');
      expect(tooLong(arrayText, longest - 1, cutEveryByte(arrayText))).toBe('entry');
      const open = `[{"code":"A1"},{"code":"${'x'.repeat(5000)}`;
      expect(tooLong(open, 1000)).toBe('entry');
    });

    it('an envelope whose members besides results are longer than the limit is refused', () => {
      const padded = `{"junk":"${'y'.repeat(5000)}","results":[{"code":"A1"}]}`;
      expect(tooLong(padded, 1000)).toBe('envelope');
      expect(tooLong(`"${'z'.repeat(5000)}`, 1000)).toBe('envelope');
    });
  });
});
