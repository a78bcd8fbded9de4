// deploy/kubernetes/refsync.yaml, the Kubernetes example of docs/production.md, parsed and held to
// what refsync is: a migrate Job before the worker Deployment, probes on the endpoints the worker
// serves and on the port the image listens on, a grace period longer than the shutdown timeout,
// only settings refsync knows, and secrets as mounted files read through *_FILE, never as values.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { commands } from '../../src/cli/commands.ts';
import { settings } from '../../src/config/settings-reference.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const text = readFileSync(`${root}deploy/kubernetes/refsync.yaml`, 'utf8');

interface Container {
  name: string;
  image: string;
  args: string[];
  env?: Array<{ name: string; value?: string; valueFrom?: unknown }>;
  envFrom?: Array<{ configMapRef?: { name: string } }>;
  ports?: Array<{ name: string; containerPort: number }>;
  livenessProbe?: { httpGet: { path: string; port: string | number }; periodSeconds: number };
  readinessProbe?: { httpGet: { path: string; port: string | number }; periodSeconds: number };
  volumeMounts?: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
}
interface PodSpec {
  containers: Container[];
  volumes?: Array<{ name: string; secret?: { secretName: string; items?: Array<{ key: string; path: string }> } }>;
  terminationGracePeriodSeconds?: number;
  securityContext?: { runAsNonRoot?: boolean };
}
interface Resource {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  data?: Record<string, string>;
  spec: { template: { spec: PodSpec }; replicas?: number };
}

const documents = parseAllDocuments(text);
const resources = documents.map((d) => d.toJS() as Resource);
const byKind = (kind: string) => resources.filter((r) => r.kind === kind);
const known = new Set(settings.flatMap((s) => (s.file ? [s.name, `${s.name}_FILE`] : [s.name])));
const secretKeys = [...text.matchAll(/--from-file=([\w-]+)=/g)].map((m) => m[1]!);

/** Every *_FILE of a container points into a read-only mount of the refsync Secret, at a key it holds. */
function secretFilesOf(pod: PodSpec, container: Container): string[] {
  const wrong: string[] = [];
  for (const e of container.env ?? []) {
    if (!e.name.endsWith('_FILE')) continue;
    const mount = container.volumeMounts?.find((m) => e.value?.startsWith(`${m.mountPath}/`));
    const volume = pod.volumes?.find((v) => v.name === mount?.name);
    const key = e.value?.slice((mount?.mountPath.length ?? 0) + 1) ?? '';
    const items = volume?.secret?.items;
    const held = items ? items.some((i) => i.path === key && secretKeys.includes(i.key)) : secretKeys.includes(key);
    if (!mount?.readOnly || volume?.secret?.secretName !== 'refsync-secrets' || !held) wrong.push(`${container.name}: ${e.name}=${e.value}`);
  }
  return wrong;
}

describe('deploy/kubernetes/refsync.yaml', () => {
  it('parses, and holds a ConfigMap, the migrate Job, the worker Deployment and its Service', () => {
    expect(documents.flatMap((d) => d.errors)).toEqual([]);
    expect(resources.map((r) => `${r.kind}/${r.metadata.name}`)).toEqual([
      'ConfigMap/refsync-config',
      'Job/refsync-migrate',
      'Deployment/refsync-worker',
      'Service/refsync-worker',
    ]);
  });

  it('runs `refsync migrate` in the Job and `refsync worker` in the Deployment, commands refsync has', () => {
    const [job] = byKind('Job');
    const [deployment] = byKind('Deployment');
    expect(job!.spec.template.spec.containers.map((c) => c.args)).toEqual([['migrate']]);
    expect(deployment!.spec.template.spec.containers.map((c) => c.args)).toEqual([['worker']]);
    const names = commands.map((c) => c.name as string);
    for (const r of [job!, deployment!]) for (const c of r.spec.template.spec.containers) expect(names).toContain(c.args[0]);
  });

  it('probes /healthz for liveness and /readyz for readiness on the port the image listens on, no more often than every 10 s', () => {
    const dockerfile = readFileSync(`${root}Dockerfile`, 'utf8');
    const port = Number(/REFSYNC_HTTP_PORT=(\d+)/.exec(dockerfile)![1]);
    const [worker] = byKind('Deployment')[0]!.spec.template.spec.containers;
    const named = worker!.ports!.find((p) => p.name === worker!.livenessProbe!.httpGet.port);
    expect(named?.containerPort).toBe(port);
    expect(worker!.livenessProbe!.httpGet.path).toBe('/healthz');
    expect(worker!.readinessProbe!.httpGet).toEqual({ path: '/readyz', port: named!.name });
    expect(worker!.readinessProbe!.periodSeconds).toBeGreaterThanOrEqual(10);
  });

  it('gives running jobs longer than the shutdown timeout to finish', () => {
    const shutdown = settings.find((s) => s.name === 'REFSYNC_SHUTDOWN_TIMEOUT_MS')!;
    const timeoutMs = Number(/`?(\d+)`?/.exec(shutdown.default)![1]);
    expect(byKind('Deployment')[0]!.spec.template.spec.terminationGracePeriodSeconds! * 1000).toBeGreaterThan(timeoutMs);
  });

  it('sets only settings refsync knows, and every secret as a file from the Secret, read-only', () => {
    const configMap = byKind('ConfigMap')[0]!;
    const names = [
      ...Object.keys(configMap.data!),
      ...resources.flatMap((r) => (r.spec?.template?.spec.containers ?? []).flatMap((c) => (c.env ?? []).map((e) => e.name))),
    ];
    expect(names.filter((n) => !known.has(n))).toEqual([]);
    const secretSettings = settings.filter((s) => s.file).map((s) => s.name);
    expect(Object.keys(configMap.data!).filter((n) => secretSettings.includes(n) && n !== 'REFSYNC_EMAIL' && n !== 'REFSYNC_WEBHOOK_URL')).toEqual([]);
    for (const r of [...byKind('Job'), ...byKind('Deployment')]) {
      const pod = r.spec.template.spec;
      expect(pod.securityContext?.runAsNonRoot, r.kind).toBe(true);
      for (const c of pod.containers) {
        expect(secretFilesOf(pod, c)).toEqual([]);
        expect((c.env ?? []).filter((e) => secretSettings.includes(e.name) && e.value !== undefined).map((e) => e.name)).toEqual([]);
        expect(c.envFrom?.every((f) => f.configMapRef?.name === configMap.metadata.name) ?? true).toBe(true);
      }
    }
  });
});
