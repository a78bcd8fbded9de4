import { startSandbox } from '../src/sandbox/index.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrateDatabase } from '../src/db/migrate.ts';
import { createUpstreamClient } from '../src/upstream/index.ts';
import { sandboxSource } from '../test/helpers/source.ts';
import { runSync } from '../src/sync/run-sync.ts';
import pg from 'pg';

const timings = new Map<string, { n: number; ms: number }>();
let tracing = false;
const origQuery = (pg.Client.prototype as any).query;
(pg.Client.prototype as any).query = function (...a: any[]) {
  const r = origQuery.apply(this, a);
  if (!tracing || typeof a[0] !== 'string' || !r || typeof r.then !== 'function') return r;
  const t0 = performance.now();
  const key = a[0].replace(/\s+/g, ' ').replace(/refdata\.\w+/g, 'refdata.X').slice(0, 80);
  return r.then((v: any) => { const e = timings.get(key) ?? { n: 0, ms: 0 }; e.n++; e.ms += performance.now() - t0; timings.set(key, e); return v; });
};
const sb = await startSandbox({ port: 0 });
const admin = new pg.Client({ connectionString: process.env.DATABASE_URL }); await admin.connect();
await admin.query('drop database if exists refsync_mb1'); await admin.query('create database refsync_mb1');
const db = await openDatabase({ url: process.env.DATABASE_URL!.replace(/\/postgres$/, '/refsync_mb1'), poolSize: 10 });
await migrateDatabase(db);
const source = sandboxSource(sb, {});
const client = createUpstreamClient(source);
tracing = true;
const t0 = performance.now();
const [r] = await runSync({ db, sources: [source], clientFor: () => client, trigger: 'cli', concurrency: 23 });
const wall = performance.now() - t0;
tracing = false;
let total = 0;
for (const [k, v] of [...timings].sort((a, b) => b[1].ms - a[1].ms).slice(0, 25)) { console.log(`${v.n}x ${v.ms.toFixed(1)} ms total  ${k}`); }
for (const v of timings.values()) total += v.ms;
console.log(`first sync ${r!.status} ${r!.outcomes.length} targets: ${wall.toFixed(0)} ms wall; statement time summed ${total.toFixed(0)} ms`);
await client.close(); await db.close(); await sb.close(); await admin.query('drop database refsync_mb1'); await admin.end();
