// copyOut reads COPY ... TO STDOUT off the connection's socket itself, so it must hand back exactly
// what Postgres sent, pass over the messages Postgres puts between rows, and leave the connection
// usable whichever way the COPY ends: complete, failed in Postgres, or failed in the caller's handler.
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
