// Tracing's switch and settings: off without an OTLP endpoint, and then not one module of the SDK is
// loaded (checked in a child process that records every module it resolves); a bad OTEL_* value is
// one line naming it, exit 2.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { tracingEnabled, tracingSettings } from '../../src/tracing/settings.ts';
import { runCli } from '../helpers/cli.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { sandboxEnv } from '../helpers/source.ts';

const repo = new URL('../../', import.meta.url);

/** The @opentelemetry modules (other than the API) a fresh process loads to start tracing and the worker's code. */
function sdkModulesLoaded(env: Record<string, string>): string[] {
  const script = `
    import { registerHooks } from 'node:module';
    const seen = new Set();
    registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); seen.add(r.url); return r; } });
    const { startTracing } = await import(${JSON.stringify(new URL('src/tracing/start.ts', repo).href)});
    const { silentLogger } = await import(${JSON.stringify(new URL('src/util/logger.ts', repo).href)});
    await import(${JSON.stringify(new URL('src/queue/worker/service.ts', repo).href)});
    const tracing = await startTracing(silentLogger, process.env);
    await tracing.shutdown(100);
    process.stdout.write(JSON.stringify([...seen].filter((u) => /@opentelemetry\\/(?!api\\/)/.test(u))));`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8' });
  expect(child.status, child.stderr).toBe(0);
  return JSON.parse(child.stdout) as string[];
}

describe('tracing settings', () => {
  it('is off unless OTEL_EXPORTER_OTLP_ENDPOINT or _TRACES_ENDPOINT is set (and OTEL_SDK_DISABLED is not true)', () => {
    expect(tracingEnabled({})).toBe(false);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBe(false);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' })).toBe(false);
  });

  it('reads the standard variables, with the defaults of the spec', () => {
    expect(tracingSettings({})).toEqual({
      serviceName: 'refsync',
      protocol: 'http/protobuf',
      sampler: { kind: 'parentbased_always_on' },
      batch: { maxQueueSize: 2048, maxExportBatchSize: 512, scheduledDelayMillis: 5000, exportTimeoutMillis: 30000 },
    });
    const s = tracingSettings({
      OTEL_SERVICE_NAME: 'sync-eu',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_BSP_MAX_QUEUE_SIZE: '100',
    });
    expect(s).toMatchObject({
      serviceName: 'sync-eu',
      protocol: 'http/json',
      sampler: { kind: 'parentbased_traceidratio', ratio: 0.25 },
      batch: { maxQueueSize: 100, maxExportBatchSize: 100 },
    });
    expect(tracingSettings({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }).protocol).toBe('http/protobuf');
  });

  it('with no endpoint not one SDK module is loaded; with one the SDK and exporter are', () => {
    expect(sdkModulesLoaded({})).toEqual([]);
    const on = sdkModulesLoaded({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1' });
    expect(on.some((u) => u.includes('@opentelemetry/sdk-trace/'))).toBe(true);
    expect(on.some((u) => u.includes('@opentelemetry/exporter-trace-otlp-proto/'))).toBe(true);
  });

  it('a protocol or sampler refsync cannot use is one line naming the variable, exit 2', async () => {
    const sb = await useSandbox();
    const base = { ...sandboxEnv(sb), OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1', REDIS_URL: 'redis://127.0.0.1:1' };
    const grpc = await runCli(['trigger'], { env: { ...base, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' } });
    expect(grpc.code).toBe(2);
    expect(grpc.stderr.trim()).toBe("refsync: OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' is not supported; use http/protobuf (the default) or http/json");
    const sampler = await runCli(['trigger'], { env: { ...base, OTEL_TRACES_SAMPLER: 'sometimes' } });
    expect(sampler.code).toBe(2);
    expect(sampler.stderr.trim()).toMatch(/^refsync: OTEL_TRACES_SAMPLER: 'sometimes' is not one of always_on, /);
  });
});
