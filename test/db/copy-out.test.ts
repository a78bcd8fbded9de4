// copyOut reads COPY ... TO STDOUT off the connection's socket itself, so it must hand back exactly
// what Postgres sent, pass over the messages Postgres puts between rows, and leave the connection
// usable whichever way the COPY ends: complete, failed in Postgres, or failed in the caller's handler.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { copyOut } from '../../src/db/copy-out.ts';
import type { Connection } from '../../src/db/database.ts';
import { useTestDatabase } from '../helpers/db.ts';

/** The COPY's messages as strings, one a row. */
async function lines(conn: Connection, sql: string): Promise<string[]> {
  const out: string[] = [];
  await copyOut(conn, sql, (buf, start, end) => out.push(buf.toString('utf8', start, end)));
  return out;
}

describe('copyOut', () => {
  const t = useTestDatabase();

  it('hands over every row as Postgres sent it, over many socket reads', async () => {
    // About 12 MB: rows fall across the socket's chunks, and some messages are split between them.
    const sql = `copy (select x, repeat(chr(65 + x % 26), 100 + x % 400), 'é\tü' || x from generate_series(1, 40000) x) to stdout`;
    const got = await t.db.withConnection((conn) => lines(conn, sql));
    expect(got).toHaveLength(40_000);
    const row = (x: number) => `${x}\t${String.fromCharCode(65 + (x % 26)).repeat(100 + (x % 400))}\té\\tü${x}\n`;
    expect(got[0]).toBe(row(1));
    expect(got[12_345]).toBe(row(12_346));
    expect(got.at(-1)).toBe(row(40_000));
    // Every row whole, none lost or doubled.
    expect(new Set(got.map((l) => Number(l.slice(0, l.indexOf('\t'))))).size).toBe(40_000);
  });

  it('passes over the notices Postgres sends between rows', async () => {
    const got = await t.db.withConnection(async (conn) => {
      await conn.query(`create function pg_temp.noisy(x int) returns int language plpgsql as $$ begin raise notice 'row %', x; return x; end $$`);
      return lines(conn, 'copy (select pg_temp.noisy(x) from generate_series(1, 500) x) to stdout');
    });
    expect(got).toEqual(Array.from({ length: 500 }, (_, i) => `${i + 1}\n`));
  });

  it("fails with Postgres's error when the COPY fails part way, and the connection goes on", async () => {
    await t.db.withConnection(async (conn) => {
      const seen: string[] = [];
      const failing = copyOut(conn, 'copy (select 1 / (5000 - x) from generate_series(1, 10000) x) to stdout', (buf, start, end) =>
        seen.push(buf.toString('utf8', start, end)),
      );
      await expect(failing).rejects.toThrow(/division by zero/);
      expect(seen.length).toBeLessThan(5_000);
      expect((await conn.query<{ one: number }>('select 1 as one')).rows).toEqual([{ one: 1 }]);
    });
  });

  it("fails with the handler's error once the COPY is read, and the connection goes on", async () => {
    await t.db.withConnection(async (conn) => {
      let calls = 0;
      const failing = copyOut(conn, 'copy (select x from generate_series(1, 1000) x) to stdout', () => {
        calls += 1;
        if (calls === 10) throw new Error('bad row 10');
      });
      await expect(failing).rejects.toThrow('bad row 10');
      // The rows after the failure are read and passed over, not handed on.
      expect(calls).toBe(10);
      expect((await conn.query<{ one: number }>('select 1 as one')).rows).toEqual([{ one: 1 }]);
      expect(await lines(conn, 'copy (select 42) to stdout')).toEqual(['42\n']);
    });
  });
});

// The protocol's bytes cut at every place a socket read may end: within a message's type or length,
// within its data, between messages. A fake connection feeds them to copyOut, and takes back what a
// COPY does not read (CommandComplete, ReadyForQuery), as node-postgres's parser would.
describe('copyOut over chunks cut anywhere', () => {
  const message = (type: string, body: Buffer) => {
    const head = Buffer.alloc(5);
    head.write(type, 0, 'latin1');
    head.writeUInt32BE(body.length + 4, 1);
    return Buffer.concat([head, body]);
  };
  const rows = ['1\talpha\n', '22\tbé\tta\n', '', `333\t${'g'.repeat(300)}\n`];
  const copy = Buffer.concat([
    message('H', Buffer.from([0, 0, 0])),
    ...rows.map((r, i) => (i === 2 ? message('N', Buffer.from('Snotice\0\0')) : message('d', Buffer.from(r)))),
    message('c', Buffer.alloc(0)),
  ]);
  const after = Buffer.concat([message('C', Buffer.from('COPY 3\0')), message('Z', Buffer.from('I'))]);
  const stream = Buffer.concat([copy, after]);

  /** copyOut fed `stream` in the chunks the cuts make; what it handed over and what went back to node-postgres. */
  async function fed(cuts: number[]): Promise<{ rows: string[]; back: Buffer }> {
    const socket = new EventEmitter();
    const back: Buffer[] = [];
    socket.on('data', (b: Buffer) => back.push(Buffer.from(b)));
    const got: string[] = [];
    const q = {
      query: async (submittable: { submit(c: unknown): unknown; handleReadyForQuery(): void }) => {
        submittable.submit({ stream: socket, query: () => undefined });
        let from = 0;
        for (const cut of [...cuts, stream.length]) {
          socket.emit('data', stream.subarray(from, cut));
          from = cut;
        }
        submittable.handleReadyForQuery();
      },
    };
    await copyOut(q as unknown as Connection, 'copy x to stdout', (buf, start, end) => got.push(buf.toString('utf8', start, end)));
    return { rows: got, back: Buffer.concat(back) };
  }

  it('hands over every row and gives back the rest exactly, wherever a chunk ends', async () => {
    const expected = { rows: rows.filter(Boolean), back: after };
    for (let cut = 1; cut < stream.length; cut++) expect(await fed([cut])).toEqual(expected);
    // One byte a chunk, and every second byte.
    expect(await fed([...Array(stream.length - 1).keys()].map((i) => i + 1))).toEqual(expected);
    expect(await fed([...Array(Math.floor((stream.length - 1) / 2)).keys()].map((i) => 2 * i + 1))).toEqual(expected);
  });
});
