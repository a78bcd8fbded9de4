// REFSYNC_DB_MAX_CONNECTIONS: the contract's defaults per kind of process, the setting
// over them, and one-line errors naming it.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.ts';
import { ConfigError } from '../../src/config/errors.ts';
import { connectionBudget, syncPool, workerPoolSize } from '../../src/db/connection-budget.ts';
import { configError } from './config-error.ts';

const base = { REFSYNC_BASE_URL: 'https://api.vendor.example', REFSYNC_EMAIL: 'machine@acme.example', REFSYNC_PASSWORD: 'pw-secret-1' };

describe('REFSYNC_DB_MAX_CONNECTIONS', () => {
  it('defaults to REFSYNC_CONCURRENCY + 1 for sync and demo, + 2 for the worker, 2 for any other command', () => {
    expect(loadConfig(base).dbMaxConnections).toBeUndefined();
    expect([connectionBudget('sync', undefined, 4), connectionBudget('worker', undefined, 4), connectionBudget('other', undefined, 4)]).toEqual([5, 6, 2]);
    expect([connectionBudget('sync', undefined, 7), connectionBudget('worker', undefined, 7)]).toEqual([8, 9]);
  });

  it('is every process budget when set, the worker LISTEN included', () => {
    const set = loadConfig({ ...base, REFSYNC_DB_MAX_CONNECTIONS: '12' }).dbMaxConnections;
    expect(set).toBe(12);
    expect(connectionBudget('other', set, 4)).toBe(12);
    expect(syncPool(set, 4)).toEqual({ poolSize: 12, concurrency: 4 });
    expect(workerPoolSize(set, 4, true)).toBe(11);
    expect(workerPoolSize(set, 4, false)).toBe(12);
    expect(workerPoolSize(undefined, 4, true)).toBe(5);
  });

  it('a sync given fewer than REFSYNC_CONCURRENCY + 1 applies fewer lists at once; the run claim keeps one', () => {
    expect(syncPool(3, 4)).toEqual({ poolSize: 3, concurrency: 2 });
    expect(syncPool(2, 4)).toEqual({ poolSize: 2, concurrency: 1 });
  });

  it('a worker given fewer than one per job, one more and its LISTEN refuses to start, naming both settings', () => {
    expect(() => workerPoolSize(5, 4, true)).toThrow(ConfigError);
    expect(() => workerPoolSize(5, 4, true)).toThrow(/^REFSYNC_DB_MAX_CONNECTIONS: 5 is too few for a worker with REFSYNC_CONCURRENCY=4: it needs 6 .*LISTEN/);
    expect(workerPoolSize(5, 4, false)).toBe(5);
  });

  it('refuses what is not a whole number from 2 to 10000, in one line naming it', () => {
    for (const value of ['1', '0', '2.5', 'many', '10001']) {
      expect(configError({ ...base, REFSYNC_DB_MAX_CONNECTIONS: value })).toBe(
        `REFSYNC_DB_MAX_CONNECTIONS: expected a whole number from 2 to 10000, got '${value}'`,
      );
    }
  });
});
