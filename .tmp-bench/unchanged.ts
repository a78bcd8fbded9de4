import { startSandbox } from '../src/sandbox/index.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrateDatabase } from '../src/db/migrate.ts';
import { createUpstreamClient } from '../src/upstream/index.ts';
import { sandboxSource } from '../test/helpers/source.ts';
import pg from 'pg';
import { targetsFor } from '../src/catalog/targets.ts';
import { syncTarget } from '../src/sync/sync-target.ts';

const sb = await startSandbox({ port: 0 });
const admin = new pg.Client({ connectionString: process.env.DATABASE_URL }); await admin.connect(); await admin.query('drop database if exists refsync_mb'); await admin.query('create database refsync_mb');
const db = await openDatabase({ url: process.env.DATABASE_URL!.replace(/\/postgres$/, '/refsync_mb'), poolSize: 2 });
await migrateDatabase(db);
const source = sandboxSource(sb, {}); const fx = { source, client: createUpstreamClient(source) };
const target = targetsFor(fx.source, ['shipment_modes'])[0]!;
await syncTarget(db, fx.client, target, { runId: null });
const timings = new Map<string, { n: number; ms: number }>();
let tracing = false;
const origQuery = (pg.Client.prototype as any).query;
(pg.Client.prototype as any).query = function (...a: any[]) {
  const r = origQuery.apply(this, a);
  if (!tracing || typeof a[0] !== 'string' || !r || typeof r.then !== 'function') return r;
  const t0 = performance.now();
  const key = a[0].replace(/\s+/g, ' ').slice(0, 90);
  return r.then((v: any) => { const e = timings.get(key) ?? { n: 0, ms: 0 }; e.n++; e.ms += performance.now() - t0; timings.set(key, e); return v; });
};
// Count statements per unchanged sync.
let statements = 0;
const orig = db.withConnection.bind(db);
(db as any).withConnection = (fn: any) => orig((conn: any) => fn(new Proxy(conn, { get(t, p) { const v = t[p]; if (p === 'query') return (...a: any[]) => { statements++; return v.apply(t, a); }; return typeof v === 'function' ? v.bind(t) : v; } })));
const N = Number(process.argv[2] ?? 300);
for (let i = 0; i < 20; i++) await syncTarget(db, fx.client, target, { runId: null });
statements = 0;
const fetchStart = performance.now();
for (let i = 0; i < N; i++) for await (const _ of fx.client.pages({ basePath: target.list.basePath, path: target.path })) void _;
const fetchMs = (performance.now() - fetchStart) / N;
tracing = true;
const start = performance.now();
for (let i = 0; i < N; i++) {
  const o = await syncTarget(db, fx.client, target, { runId: null });
  if (o.status !== 'unchanged') throw new Error(o.status);
}
const ms = (performance.now() - start) / N;
tracing = false;
for (const [k, v] of [...timings].sort((a, b) => b[1].ms - a[1].ms)) console.log(`${(v.n / N).toFixed(1)}x ${(v.ms / v.n).toFixed(2)} ms  ${k}`);
console.log(`unchanged syncTarget: ${ms.toFixed(2)} ms each; fetch only ${fetchMs.toFixed(2)} ms; db ${(ms - fetchMs).toFixed(2)} ms; ${(statements / N).toFixed(1)} statements each`);
await fx.client.close(); await db.close(); await sb.close(); await admin.query('drop database refsync_mb'); await admin.end();
