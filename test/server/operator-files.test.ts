// The files operators drop into their monitoring: deploy/prometheus/refsync-rules.yml, checked and
// unit-tested by promtool (Debian package `prometheus`; skipped, saying so, where it is missing), and
// deploy/grafana/refsync.json. Every metric that a rule or a dashboard query names must be one a real
// worker exports: a renamed or misspelt metric would leave an alert that never fires, silently.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { useTestDatabase } from '../helpers/db.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { repoRoot, startTestWorker, workerConfig, testQueuePrefix } from '../queue/helpers.ts';

const tdb = useTestDatabase();
const RULES_DIR = `${repoRoot}deploy/prometheus`;
const havePromtool = !spawnSync('promtool', ['--version']).error;
if (!havePromtool) console.warn('[operator files] promtool tests skipped: no promtool on PATH (apt-get install prometheus; .ci/run does)');

interface Rule {
  alert: string;
  expr: string;
  for?: string;
}
interface Target {
  expr: string;
  datasource: { uid: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  targets?: Target[];
  datasource?: { uid: string };
}

const rules = (parse(readFileSync(`${RULES_DIR}/refsync-rules.yml`, 'utf8')) as { groups: Array<{ rules: Rule[] }> }).groups.flatMap((g) => g.rules);
const dashboard = JSON.parse(readFileSync(`${repoRoot}deploy/grafana/refsync.json`, 'utf8')) as {
  panels: Panel[];
  templating: { list: Array<{ name: string; definition?: string }> };
};
const queryPanels = dashboard.panels.filter((p) => p.type !== 'row');

const NOT_METRICS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan']);

/** The metric names a PromQL expression selects: identifiers that are no function, keyword, label or variable. */
function metricNames(expr: string): string[] {
  const selectors = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$\w+/g, ' ');
  const identifiers = [...selectors.matchAll(/(?<![\w.])[a-zA-Z_:][\w:]*/g)];
  // An identifier followed by '(' is a function.
  const isFunction = (m: RegExpExecArray) =>
    selectors
      .slice(m.index + m[0].length)
      .trimStart()
      .startsWith('(');
  return identifiers
    .filter((m) => !isFunction(m))
    .map((m) => m[0])
    .filter((name) => !NOT_METRICS.has(name));
}

/** Every series name the worker's /metrics declares (histograms as their _bucket, _sum and _count). */
function exportedNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!);
    if (type === 'histogram' || type === 'summary') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
}

describe.skipIf(!havePromtool)('deploy/prometheus/refsync-rules.yml with promtool', () => {
  it('is valid and passes its unit tests (refsync-rules.test.yml)', () => {
    for (const args of [
      ['check', 'rules', 'refsync-rules.yml'],
      ['test', 'rules', 'refsync-rules.test.yml'],
    ]) {
      const run = spawnSync('promtool', args, { cwd: RULES_DIR, encoding: 'utf8' });
      expect(run.status, `promtool ${args.join(' ')}:\n${run.stdout}${run.stderr}`).toBe(0);
    }
  });
});

describe('rules and dashboard', () => {
  it('name only metrics that a running worker exports', async () => {
    const sb = await useSandbox();
    const worker = await startTestWorker(workerConfig(sb, tdb.url, { REFSYNC_ENVIRONMENT: 'files-env' }), testQueuePrefix());
    const exported = exportedNames(await (await fetch(`http://127.0.0.1:${worker.http.port}/metrics`)).text());
    expect(exported.has('refsync_sync_duration_seconds_bucket')).toBe(true);

    const queries = [
      ...rules.map((r) => ({ where: `rule ${r.alert}`, expr: r.expr })),
      ...queryPanels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: `panel '${p.title}'`, expr: t.expr }))),
      ...dashboard.templating.list
        .filter((v) => v.definition)
        .map((v) => ({ where: `variable ${v.name}`, expr: v.definition!.replace(/^label_values\((\w+),.*$/, '$1') })),
    ];
    const named = new Set<string>();
    for (const { where, expr } of queries) {
      const names = metricNames(expr);
      expect(names.length, `${where} names no metric: ${expr}`).toBeGreaterThan(0);
      for (const name of names) {
        expect(exported.has(name), `${where} names ${name}, which the worker does not export: ${expr}`).toBe(true);
        named.add(name);
      }
    }
    // The list: syncs by status, durations, changes, queue depth, alert delivery; and the
    // per-target state the rules alert on.
    for (const name of [
      'refsync_sync_duration_seconds_count',
      'refsync_sync_duration_seconds_bucket',
      'refsync_entry_changes_total',
      'refsync_queue_jobs',
      'refsync_alerts_pending',
      'refsync_list_held',
      'refsync_list_consecutive_failures',
      'refsync_last_success_timestamp_seconds',
    ]) {
      expect(named, name).toContain(name);
    }
  });

  it('the scanner finds metric names and only them', () => {
    expect(metricNames('time() - max by (source) (refsync_last_success_timestamp_seconds) > 2 * 3600')).toEqual(['refsync_last_success_timestamp_seconds']);
    expect(metricNames('max(a_b{state="wait"}) > 0 unless sum(rate(c_total{outcome="x"}[15m])) > 0')).toEqual(['a_b', 'c_total']);
    expect(metricNames('histogram_quantile(0.95, sum by (le) (rate(h_bucket{source=~"$source"}[$__rate_interval])))')).toEqual(['h_bucket']);
  });

  it('the dashboard has unique panel ids, and every query panel reads the chosen Prometheus', () => {
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(dashboard.templating.list.map((v) => v.name)).toEqual(expect.arrayContaining(['datasource', 'source']));
    for (const p of queryPanels) {
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      expect(p.datasource?.uid, p.title).toBe('${datasource}');
      for (const t of p.targets!) expect(t.datasource.uid, p.title).toBe('${datasource}');
    }
  });
});
