import { z } from 'zod';
import { listKeys } from '../catalog/list-keys.ts';
import { listKeySchema } from './list-key-schema.ts';
import { basePathProblem, listPathProblem } from './list-path.ts';
import { limitFields } from './source-limits.ts';
import { alertKinds, webhookFormats } from './types.ts';
import { schemaChangesSchema } from './schema-changes.ts';
import { usageSchema } from './usage.ts';

const commaList = (value: unknown) =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '')
    : value;

const isoDate = /^\d{4}-\d{2}-\d{2}$/;

function isRealDate(value: string): boolean {
  const d = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().startsWith(value);
}

const httpsOrigin = z.string().superRefine((value, ctx) => {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    ctx.addIssue({ code: 'custom', message: `'${value}' is not a URL` });
    return;
  }
  if (url.protocol === 'http:') {
    ctx.addIssue({ code: 'custom', message: 'plain http:// is refused: the upstream is HTTPS only' });
  } else if (url.protocol !== 'https:') {
    ctx.addIssue({ code: 'custom', message: `must be an https:// origin, not ${url.protocol}` });
  } else if (url.username || url.password) {
    ctx.addIssue({ code: 'custom', message: 'must not carry user info; use REFSYNC_EMAIL/REFSYNC_PASSWORD' });
  } else if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash) {
    ctx.addIssue({ code: 'custom', message: 'must be an origin (https://host[:port]) with no path or query' });
  }
});

const chargeCodeVersion = z.string().refine((v) => v === 'unpinned' || (isoDate.test(v) && isRealDate(v)), {
  message: "each version must be a date like 2024-06-11 or 'unpinned'",
});

const cron = z.string().refine(
  (v) => {
    const fields = v.trim().split(/\s+/);
    return fields.length >= 5 && fields.length <= 6;
  },
  { message: 'must be a cron expression of 5 or 6 fields' },
);

const timezone = z.string().refine(
  (tz) => {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: tz });
      return true;
    } catch {
      return false;
    }
  },
  { message: 'is not a known IANA time zone' },
);

/** A zod string checked by one of the list-path rules (see list-path.ts). */
const checkedPath = (problem: (value: string) => string | undefined) =>
  z.string().superRefine((value, ctx) => {
    const message = problem(value);
    if (message) ctx.addIssue({ code: 'custom', message });
  });

const listOverride = z.strictObject({
  basePath: checkedPath(basePathProblem).optional(),
  path: checkedPath(listPathProblem).optional(),
});

/** One source after secrets were resolved; both env and REFSYNC_CONFIG sources are checked by it. */
export const sourceSchema = z.strictObject({
  name: z
    .string()
    .min(1)
    .regex(/^[A-Za-z0-9_.-]+$/, 'may hold only letters, digits, _ . -'),
  environment: z.string().min(1).max(64),
  baseUrl: httpsOrigin,
  email: z.string().min(1).optional(),
  password: z.string().min(1).optional(),
  apiKey: z.string().min(1).optional(),
  apiKeyScheme: z.enum(['apikey', 'bearer', 'basic']),
  chargeCodeVersions: z.preprocess(commaList, z.array(chargeCodeVersion).min(1)),
  carriers: z.preprocess(commaList, z.array(z.string().regex(/^[a-z0-9_-]+$/, 'must be lower-case names like fedex')).min(1)),
  lists: z.preprocess((v) => (v === 'all' ? [...listKeys] : commaList(v)), z.array(listKeySchema).min(1)),
  schedule: cron,
  timezone,
  caFile: z.string().min(1).optional(),
  maxRemovedFraction: z.coerce.number().min(0).max(1),
  maxConcurrentJobs: z.coerce.number().int('must be a whole number').min(1).max(256).optional(),
  impactTimeoutS: z.coerce.number().positive('must be more than 0').max(3600).optional(),
  alertOn: z.preprocess(commaList, z.array(z.enum(alertKinds))),
  alertLists: z.preprocess(commaList, z.array(listKeySchema)).optional(),
  // Its own sentence: plain http is possible, and the setting that allows it is named.
  webhookUrl: z.url({ protocol: /^https?$/, error: 'must be an https:// URL (http:// only with REFSYNC_WEBHOOK_ALLOW_PRIVATE=true)' }).optional(),
  webhookSecret: z.string().min(1).optional(),
  webhookFormat: z.enum(webhookFormats),
  webhookAllowPrivate: z.boolean(),
  listOverrides: z.record(listKeySchema, listOverride),
  ...limitFields,
  schemaChanges: schemaChangesSchema,
});

export type RawSource = z.input<typeof sourceSchema>;
export type ParsedSource = z.output<typeof sourceSchema>;

/**
 * REFSYNC_CONFIG: a file listing sources (every field optional where the environment gives a
 * default), or holding only `usage` and `catalog`, the source then coming from the environment.
 */
export const configFileSchema = z.strictObject({
  sources: z.array(z.record(z.string(), z.unknown())).min(1).optional(),
  catalog: z.record(listKeySchema, listOverride).optional(),
  usage: z.array(usageSchema).optional(),
});

/**
 * REFSYNC_LISTEN_DATABASE_URL: where the alert dispatcher LISTENs, which needs a session of its own
 * (a direct connection, not a transaction-mode pooler), or 'off' to poll only. The value may carry
 * a password, so messages never echo it.
 */
export const listenDatabaseUrlSchema = z.union([
  z.literal('off'),
  z.string().refine(
    (value) => {
      try {
        return ['postgres:', 'postgresql:'].includes(new URL(value).protocol);
      } catch {
        return false;
      }
    },
    { message: "must be a postgres:// URL (a direct connection, not through a transaction pooler) or 'off'" },
  ),
]);

/** A comma list of `host:port` (the sentinels of REDIS_SENTINELS, the seed nodes of REDIS_CLUSTER_NODES). */
function hostPortList(what: string, example: string) {
  const message = `expected host:port of each ${what}, comma-separated (e.g. ${example})`;
  return z.preprocess(
    commaList,
    z
      .array(
        z
          .string()
          .regex(/^[^\s:,]+:\d{1,5}$/, message)
          .transform((hostPort) => {
            const at = hostPort.lastIndexOf(':');
            return { host: hostPort.slice(0, at), port: Number(hostPort.slice(at + 1)) };
          }),
      )
      .min(1, message),
  );
}

/** REDIS_SENTINELS: `host:port` of each sentinel, comma-separated. */
export const redisSentinelsSchema = hostPortList('sentinel', 's1:26379,s2:26379');

/** REDIS_CLUSTER_NODES: `host:port` of some nodes of a Redis Cluster (seeds: the rest are discovered). */
export const redisClusterNodesSchema = hostPortList('cluster node', 'r1:6379,r2:6379');
