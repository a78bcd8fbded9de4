import { z } from 'zod';
import type { ListKey } from '../catalog/list-keys.ts';
import { listKeySchema } from './list-key-schema.ts';
import { targetsFor } from '../catalog/catalog.ts';
import { ConfigError } from './errors.ts';
import type { SourceConfig, UsageColumn, UsageSource } from './types.ts';

// Plain (unquoted) Postgres names only: they reach SQL through format('%I'), and a name that needs
// quotes in SQL is rarer in a fact table than a typo this check catches.
const identifier = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;
const name = z.string().regex(identifier, 'must be a plain column name (letters, digits, _; not quoted)');

/** One entry of the REFSYNC_CONFIG `usage` array: a column of the user's own data holding codes of a list. */
export const usageSchema = z.strictObject({
  list: listKeySchema,
  variant: z.string().optional(),
  column: z.string().refine((c) => c.split('.').length === 3 && c.split('.').every((p) => identifier.test(p)), {
    message: 'must be schema.table.column, each a plain name (letters, digits, _)',
  }),
  at: name.optional(),
  groupBy: name.optional(),
  recentDays: z.number().int().min(1).max(36_500).default(90),
  environment: z.string().min(1).optional(),
});

export type ParsedUsage = z.output<typeof usageSchema>;

export function toUsageSource(parsed: ParsedUsage): UsageSource {
  const usage: UsageSource = { list: parsed.list as ListKey, column: parsed.column, recentDays: parsed.recentDays };
  if (parsed.variant !== undefined) usage.variant = parsed.variant;
  if (parsed.at) usage.at = parsed.at;
  if (parsed.groupBy) usage.groupBy = parsed.groupBy;
  if (parsed.environment) usage.environment = parsed.environment;
  return usage;
}

/** The variants a source syncs of a list: '' for plain lists, its carriers, or its charge-code versions. */
function variantsOf(source: SourceConfig, list: ListKey): string[] {
  return targetsFor(source, [list]).map((t) => t.variant);
}

/**
 * The usage columns that apply to one source, each with its variant: the one named, else the
 * first the source syncs (for charge codes, the first configured version).
 */
export function usageFor(source: SourceConfig, usage: UsageSource[]): UsageColumn[] {
  const columns: UsageColumn[] = [];
  usage.forEach((u, index) => {
    if (u.environment !== undefined && u.environment !== source.environment) return;
    const variants = variantsOf(source, u.list);
    if (variants.length === 0) return;
    const variant = u.variant ?? variants[0]!;
    if (!variants.includes(variant)) {
      throw new ConfigError(
        `REFSYNC_CONFIG usage[${index}].variant: '${variant}' is not a variant source '${source.name}' syncs of ${u.list} (${variants.map((v) => `'${v}'`).join(', ')})`,
      );
    }
    columns.push({ ...u, variant });
  });
  return columns;
}

/** Every usage entry must reach some source, else it would silently never be used. */
export function checkUsageReached(sources: SourceConfig[], usage: UsageSource[]): void {
  usage.forEach((u, index) => {
    const reached = sources.some((s) => (u.environment === undefined || u.environment === s.environment) && s.lists.includes(u.list));
    if (!reached) {
      throw new ConfigError(
        u.environment !== undefined && !sources.some((s) => s.environment === u.environment)
          ? `REFSYNC_CONFIG usage[${index}].environment: no source has the environment '${u.environment}'`
          : `REFSYNC_CONFIG usage[${index}].list: no source syncs ${u.list} (REFSYNC_LISTS)`,
      );
    }
  });
}
