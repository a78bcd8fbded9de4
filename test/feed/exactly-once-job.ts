// The exactly-once recipe of docs/change-feed.md ("Reading changes exactly once") as a job: each batch
// is loaded and its position stored in one transaction. Between the load and the commit it says
// `loaded` and waits for a line on stdin, so that a test can SIGKILL it exactly there. Prints `done`
// once the feed has nothing more. Run by test/feed/exactly-once.test.ts: node exactly-once-job.ts URL.
import { createInterface } from 'node:readline';
import pg from 'pg';

const client = new pg.Client({ connectionString: process.argv[2], application_name: 'refsync-test-exactly-once-job' });
await client.connect();
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
for (;;) {
  await client.query('begin');
  const { rows: state } = await client.query<{ position: string | null }>("select position from etl_feed_position where job = 'warehouse' for update");
  const { rows } = await client.query<{ position: string; id: string }>('select position, id from refdata.change_feed($1, 50)', [state[0]!.position]);
  if (rows.length === 0) {
    await client.query('commit');
    process.stdout.write('done\n');
    break;
  }
  await client.query('insert into etl_loaded (position, id) select * from unnest($1::text[], $2::bigint[])', [
    rows.map((r) => r.position),
    rows.map((r) => r.id),
  ]);
  process.stdout.write('loaded\n');
  await lines.next();
  await client.query("update etl_feed_position set position = $1 where job = 'warehouse'", [rows.at(-1)!.position]);
  await client.query('commit');
}
await client.end();
process.exit(0);
