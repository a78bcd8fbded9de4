// How a source takes a change of a list's columns (REFSYNC_SCHEMA_CHANGES, or schemaChanges in a
// REFSYNC_CONFIG source): one policy, or one per list key with '*' for the others.
import { z } from 'zod';
import { isListKey, notAListKey, type ListKey } from '../catalog/list-keys.ts';

/**
 * `evolve`: new fields become columns and a field that changed kind is re-typed. `hold-breaking`:
 * new fields still become columns, but a change of kind or a field gone holds the list.
 * `freeze`: any change of the columns (new, changed type, gone) holds the list.
 */
export const schemaPolicies = ['evolve', 'hold-breaking', 'freeze'] as const;
export type SchemaPolicy = (typeof schemaPolicies)[number];

/** A source's policies: the one for lists not named, and the ones named per list. */
export interface SchemaChanges {
  default: SchemaPolicy;
  lists: Partial<Record<ListKey, SchemaPolicy>>;
}

const isPolicy = (v: unknown): v is SchemaPolicy => typeof v === 'string' && (schemaPolicies as readonly string[]).includes(v);
const policyMessage = `must be one of: ${schemaPolicies.join(', ')}`;

/** The setting as given (a policy, or an object of list key or '*' to policy), checked and normalised. */
export const schemaChangesSchema = z.unknown().transform((value, ctx): SchemaChanges => {
  if (typeof value === 'string') {
    if (isPolicy(value)) return { default: value, lists: {} };
    ctx.addIssue({ code: 'custom', message: policyMessage });
    return z.NEVER;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    ctx.addIssue({ code: 'custom', message: `must be a policy (${schemaPolicies.join(', ')}) or an object of list key (or '*') to policy` });
    return z.NEVER;
  }
  const result: SchemaChanges = { default: 'evolve', lists: {} };
  for (const [key, policy] of Object.entries(value)) {
    if (key !== '*' && !isListKey(key)) {
      ctx.addIssue({ code: 'custom', message: `${notAListKey(key)} nor '*'` });
      return z.NEVER;
    }
    if (!isPolicy(policy)) {
      ctx.addIssue({ code: 'custom', path: [key], message: policyMessage });
      return z.NEVER;
    }
    if (key === '*') result.default = policy;
    else result.lists[key] = policy;
  }
  return result;
});

/** REFSYNC_SCHEMA_CHANGES as given: a policy, or the object form as JSON. */
export function schemaChangesFromEnv(value: string | undefined): unknown {
  if (value === undefined || value.trim() === '') return 'evolve';
  const text = value.trim();
  if (!text.startsWith('{')) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // Left as text: the schema names the setting and what it takes.
    return text;
  }
}

/** The policy a source applies to a list: its own, else the source's '*' (evolve when unset). */
export function schemaPolicyFor(changes: SchemaChanges, key: ListKey): SchemaPolicy {
  return changes.lists[key] ?? changes.default;
}
