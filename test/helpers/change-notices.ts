import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';

/**
 * A LISTEN client on refdata_changes for the describe it is called in, from its beforeAll on (the
 * database at `url()`, read then). Returns a snapshot's notices once one is heard: a notice travels
 * after its commit, apart from the sync's answer, so it is waited for (2 s at most).
 */
export function useChangeNotices(url: () => string): (snapshotId: number | undefined) => Promise<Array<Record<string, unknown>>> {
  const notices: Array<Record<string, unknown>> = [];
  let listener: pg.Client | undefined;
  beforeAll(async () => {
    listener = new pg.Client({ connectionString: url() });
    await listener.connect();
    listener.on('notification', (n) => notices.push(JSON.parse(n.payload!) as Record<string, unknown>));
    await listener.query('listen refdata_changes');
  });
  afterAll(async () => {
    await listener?.end();
  });
  return async (snapshotId) => {
    for (let i = 0; i < 200 && !notices.some((n) => n.snapshot_id === snapshotId); i++) await new Promise((r) => setTimeout(r, 10));
    return notices.filter((n) => n.snapshot_id === snapshotId);
  };
}
