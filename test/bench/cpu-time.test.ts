// The bench's reading of Postgres's CPU (bench/cpu-time.ts) while tests run beside it, as in CI:
// backends end all around it, and a test may start and stop a Postgres cluster of its own. CPU used
// only grows, so no reading may be below the one before; P3's smoke run once printed 'postgres
// -0.1 s'.
import pg from 'pg';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { cpuSeconds, cpuUsed, type CpuReading } from '../../bench/cpu-time.ts';

let url: string;
beforeAll(() => {
  url = inject('databaseServerUrl');
});

describe("the bench's Postgres CPU", () => {
  it.runIf(process.platform === 'linux')('never reads less than the reading before, while backends start, work and end beside it', async () => {
    let stop = false;
    const churn = async () => {
      while (!stop) {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        // Enough work that a backend ends with some CPU of its own to count twice or lose.
        await client.query('select count(*) from generate_series(1, 20000)');
        await client.end();
      }
    };
    const churning = Promise.all([churn(), churn(), churn()]);
    const readings: number[] = [];
    try {
      const first = await cpuSeconds([]);
      for (let i = 0; i < 40; i++) readings.push(cpuUsed(first, await cpuSeconds([])).postgres ?? Number.NaN);
    } finally {
      stop = true;
      await churning;
    }
    const drops = readings.flatMap((r, i) => (i > 0 && r < readings[i - 1]! - 1e-9 ? [`${readings[i - 1]} -> ${r}`] : []));
    expect(readings.every(Number.isFinite)).toBe(true);
    expect(drops).toEqual([]);
    expect(readings.at(-1)!).toBeGreaterThan(readings[0]!);
  });

  it('counts only the servers running at both readings: a cluster that started or stopped between them is not a negative or a gain', () => {
    const reading = (postgres: Array<[number, number]>): CpuReading => ({ parts: { sandbox: 1 }, postgres: new Map(postgres) });
    const used = cpuUsed(
      reading([
        [100, 50],
        [200, 30],
      ]),
      reading([
        [100, 52.5],
        [300, 9],
      ]),
    );
    expect(used).toEqual({ sandbox: 0, postgres: 2.5 });
    expect(cpuUsed(reading([[200, 30]]), reading([[300, 9]])).postgres).toBeUndefined();
  });
});
