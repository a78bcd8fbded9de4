import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { catalog } from '../../src/catalog/catalog.ts';
import { ListCollector } from '../../src/sync/collect/collect.ts';
import type { UpstreamClientOptions } from '../../src/upstream/client.ts';
import { ProtocolError, SizeError, PagingError, UpstreamClient } from '../../src/upstream/index.ts';
import { parseKeepingNumbers } from '../../src/upstream/list-body.ts';
import type { ListBatch } from '../../src/upstream/list-batch.ts';
import { failure, fast, tinyServer, type TinyServer } from './fixtures.ts';

// A list answer larger than a page is read and parsed as it arrives; these answers are written
// in pieces cut at awkward bytes (inside strings, escapes, multi-byte characters and numbers), each
// piece flushed on its own so the client really receives them apart.

/** Entries of ~150 bytes: 12 batches of the client's page size (1,000), 1.8 MB in all. */
const ENTRIES = 12_000;
function entryText(i: number): string {
  const big = i % 1000 === 7 ? ',"weight":12345678901234567891,"ratio":0.10000000000000000000001' : `,"weight":${i * 0.25}`;
  return `{"code":"C${i}","description":"déjà ✓ 😀 \\"quoted\\" \\\\ back\\u00e9slash, ] } [ { number ${i}"${big},"tags":["a","b",{"n":[${i},-1.5e3]}]}`;
}
const arrayText = `[${Array.from({ length: ENTRIES }, (_, i) => entryText(i)).join(',')}]`;

/** Writes `text` in pieces of irregular sizes, one write (and TLS record) each, chunked encoding. */
function writeInPieces(res: ServerResponse, text: string): void {
  const bytes = Buffer.from(text);
  res.writeHead(200, { 'content-type': 'application/json' });
  let at = 0;
  for (let n = 0; at < bytes.length; n++) {
    const size = [1, 7, 333, 4093, 65_537][n % 5]!;
    res.write(bytes.subarray(at, at + size));
    at += size;
  }
  res.end();
}

let server: TinyServer | undefined;
let c: UpstreamClient | undefined;
afterEach(async () => {
  await c?.close();
  await server?.close();
  c = server = undefined;
});

async function serve(answer: (page: number, res: ServerResponse) => void, options: Partial<UpstreamClientOptions> = {}): Promise<UpstreamClient> {
  server = await tinyServer((req, res) => answer(Number(new URL(req.url ?? '/', 'https://x').searchParams.get('page')), res));
  c = new UpstreamClient({
    baseUrl: server.url,
    environment: 't',
    credentials: { apiKey: 'k-0000', apiKeyScheme: 'apikey' },
    ca: server.caPem,
    ...fast,
    ...options,
  });
  return c;
}

async function batches(client: UpstreamClient): Promise<ListBatch[]> {
  const all: ListBatch[] = [];
  for await (const batch of client.pages({ basePath: '/v2', path: '/shipments/nmfc/' })) all.push(batch);
  return all;
}

/**
 * Whether the entries are exactly what one JSON.parse of the whole text gives, big numbers kept
 * (JSON.stringify writes a kept literal back verbatim). A boolean: a diff of 3 MB helps nobody.
 */
function sameAsWholeParse(entries: unknown[], text: string): boolean {
  const whole = parseKeepingNumbers(text, (reviver) => JSON.parse(text, (reviver ?? undefined) as never));
  return JSON.stringify(entries) === JSON.stringify(whole);
}

describe('a list answer larger than a page streams in batches', () => {
  it('a bare array: exactly the entries as served, in batches of the page size, all of one page', async () => {
    const got = await batches(await serve((_page, res) => writeInPieces(res, arrayText)));
    expect(got.map((b) => b.entries.length)).toEqual(Array.from({ length: 12 }, () => 1000));
    expect(got.map((b) => b.continuesPage)).toEqual([false, ...got.slice(1).map(() => true)]);
    // Each batch's served text is the text its entries were parsed from.
    expect(got.every((b) => b.servedText !== null && sameAsWholeParse(b.entries, b.servedText))).toBe(true);
    const entries = got.flatMap((b) => b.entries);
    expect(entries).toHaveLength(ENTRIES);
    expect(sameAsWholeParse(entries, arrayText)).toBe(true);
    expect(JSON.stringify((entries[7] as { weight: unknown }).weight)).toBe('12345678901234567891');
    expect(server!.requests).toHaveLength(1);
  });

  it('the collector counts the batches of one bare array as one page', async () => {
    const client = await serve((_page, res) => writeInPieces(res, arrayText));
    const collector = new ListCollector(catalog.find((l) => l.key === 'shipment_modes')!, { spillThreshold: 100_000, spill: async () => undefined });
    for await (const batch of client.pages({ basePath: '/v2', path: '/shipments/nmfc/' })) await collector.addBatch(batch);
    expect(await collector.finish()).toMatchObject({ pages: 1, entryCount: ENTRIES });
  });

  it("a list's served digest is the same however its bytes are cut, counts its entries and not its envelope, and holding it changes nothing", async () => {
    const collected = async (cut: boolean, envelope: (page: number) => string, hold: boolean) => {
      const client = await serve((page, res) => {
        const text = envelope(page);
        if (cut) writeInPieces(res, text);
        else res.writeHead(200, { 'content-type': 'application/json' }).end(text);
      });
      const collector = new ListCollector(catalog.find((l) => l.key === 'shipment_modes')!, {
        spillThreshold: 100_000,
        spill: async () => undefined,
        served: { entries: 100_000, chars: 2 ** 26, keepRaw: hold },
      });
      for await (const batch of client.pages({ basePath: '/v2', path: '/shipments/nmfc/' })) await collector.addBatch(batch);
      await c!.close();
      await server!.close();
      return collector.finish();
    };
    const bare = () => arrayText;
    const cursor = (token: string) => (page: number) =>
      page === 1 ? `{"results":${arrayText},"next":"/v2/shipments/nmfc/?cursor=${token}"}` : `{"next":null,"results":[{"code":"LAST"}],"served_at":"${token}"}`;
    const whole = await collected(false, bare, false);
    expect(whole.servedDigest).toMatch(/^[0-9a-f]{64}$/);
    const inPieces = await collected(true, bare, true);
    expect(inPieces).toMatchObject({ servedDigest: whole.servedDigest, contentHash: whole.contentHash, entryCount: ENTRIES });
    // The envelope around the entries (a cursor, a time) is not part of it; the entries are.
    const first = await collected(true, cursor('a1'), true);
    const second = await collected(false, cursor('b2'), false);
    expect(first.servedDigest).toBe(second.servedDigest);
    expect(first.servedDigest).not.toBe(whole.servedDigest);
    expect(first.contentHash).not.toBe(whole.contentHash);
  });

  it('a results envelope: the entries stream, and the members after them still page the list', async () => {
    const client = await serve((page, res) => {
      if (page === 1)
        writeInPieces(res, `{"results":${arrayText},"total_count":${ENTRIES + 1},"total_pages":2,"next":"/v2/shipments/nmfc/?page=2&page-size=1000"}`);
      else writeInPieces(res, `{"next":null,"results":[{"code":"LAST"}],"total_count":${ENTRIES + 1}}`);
    });
    const got = await batches(client);
    expect(got.filter((b) => !b.continuesPage)).toHaveLength(2);
    expect(
      sameAsWholeParse(
        got.flatMap((b) => b.entries),
        `${arrayText.slice(0, -1)},{"code":"LAST"}]`,
      ),
    ).toBe(true);
    expect(server!.requests.map((r) => r.url)).toEqual(['/v2/shipments/nmfc/?page=1&page-size=1000', '/v2/shipments/nmfc/?page=2&page-size=1000']);
  });

  it('a stated total read after the streamed results is still checked', async () => {
    const client = await serve((_page, res) => writeInPieces(res, `{"results":${arrayText},"total_count":${ENTRIES + 5},"next":null}`));
    const err = await failure(batches(client));
    expect(err).toBeInstanceOf(PagingError);
    expect(err.message).toBe(`GET /v2/shipments/nmfc/ page 1: expected ${ENTRIES + 5} entries (total_count) but got ${ENTRIES}`);
  });

  it('malformed JSON after the first batches fails the list with one line', async () => {
    const broken = `${arrayText.slice(0, -1)},{"code":"X" "oops":1}]`;
    const err = await failure(batches(await serve((_page, res) => writeInPieces(res, broken))));
    expect(err).toBeInstanceOf(ProtocolError);
    expect(err.message).toMatch(/^GET \/v2\/shipments\/nmfc\/ page 1: answered truncated or invalid JSON \(\d+ bytes: .+\)$/);
    expect(err.message).not.toContain('\n');
  });

  it('a body that ends early fails the list as truncated', async () => {
    const err = await failure(batches(await serve((_page, res) => writeInPieces(res, arrayText.slice(0, -200)))));
    expect(err).toBeInstanceOf(ProtocolError);
    expect(err.message).toMatch(/answered truncated or invalid JSON \(\d+ bytes: unexpected end of the JSON text \(truncated\)\)$/);
  });

  it('an entry that is not an object is named by its place in the whole page', async () => {
    const text = `${arrayText.slice(0, -1)},42]`;
    const err = await failure(batches(await serve((_page, res) => writeInPieces(res, text))));
    expect(err.message).toBe(`GET /v2/shipments/nmfc/ page 1: entry ${ENTRIES} is number, not an object`);
  });

  it('a chunked body that grows past the bytes-per-list limit is cut there', async () => {
    const err = await failure(batches(await serve((_page, res) => writeInPieces(res, arrayText), { listLimits: { maxListBytes: 2 ** 20 } })));
    expect(err).toBeInstanceOf(SizeError);
    expect(err.message).toBe(`GET /v2/shipments/nmfc/ page 1: the list's answers exceed ${2 ** 20} bytes in all, the limit of REFSYNC_MAX_LIST_BYTES; refused`);
  });

  it('a list past the entries-per-list limit is cut there; the read whole-answer cap does not apply to lists', async () => {
    const err = await failure(
      batches(await serve((_page, res) => writeInPieces(res, arrayText), { maxResponseBytes: 1024, listLimits: { maxListEntries: ENTRIES - 1 } })),
    );
    expect(err).toBeInstanceOf(SizeError);
    expect(err.message).toMatch(
      new RegExp(`^GET /v2/shipments/nmfc/ page 1: the list has more than ${ENTRIES - 1} entries, the limit of REFSYNC_MAX_LIST_ENTRIES; refused$`),
    );
  });

  it('a list of exactly the entries-per-list limit is read whole, far past the whole-answer cap', async () => {
    const all = await batches(await serve((_page, res) => writeInPieces(res, arrayText), { maxResponseBytes: 1024, listLimits: { maxListEntries: ENTRIES } }));
    expect(all.flatMap((b) => b.entries)).toHaveLength(ENTRIES);
  });
});
