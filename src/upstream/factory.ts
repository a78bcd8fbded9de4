import { limitsOf } from '../config/source-limits.ts';
import type { SourceConfig } from '../config/types.ts';
import type { Logger } from '../util/logger.ts';
import type { Credentials } from './auth.ts';
import { UpstreamClient, type UpstreamClientOptions } from './client.ts';

/** The client for one configured source; `extra` overrides options (tests, the worker's metrics hook). */
export function createUpstreamClient(source: SourceConfig, logger?: Logger, extra: Partial<UpstreamClientOptions> = {}): UpstreamClient {
  const credentials: Credentials = { apiKeyScheme: source.apiKeyScheme };
  if (source.email) credentials.email = source.email;
  if (source.password) credentials.password = source.password;
  if (source.apiKey) credentials.apiKey = source.apiKey;
  const limits = limitsOf(source);
  const options: UpstreamClientOptions = {
    baseUrl: source.baseUrl,
    environment: source.environment,
    credentials,
    requestDeadlineMs: limits.requestDeadlineS * 1000,
    listLimits: { maxEntryBytes: limits.maxEntryBytes, maxListEntries: limits.maxListEntries, maxListBytes: limits.maxListBytes },
    ...extra,
  };
  if (source.caPem && extra.ca === undefined) options.ca = source.caPem;
  const log = extra.logger ?? logger;
  if (log) options.logger = log;
  return new UpstreamClient(options);
}
