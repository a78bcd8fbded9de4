import type { SourceConfig } from '../config/types.ts';
import { getListDefinition, type ListDefinition } from './catalog.ts';
import type { ListKey } from './list-keys.ts';

/** The unit of sync: one variant of one list of one source. */
export interface Target {
  source: SourceConfig;
  list: ListDefinition;
  /** '' for plain lists, the carrier, or the charge-code version ('unpinned' or a date). */
  variant: string;
  /** The upstream path with `{carrier}` filled in, relative to the list's base path. */
  path: string;
  /** Sent as X-Service-Version; absent for unpinned charge codes and every other list. */
  serviceVersion?: string;
}

// A target's names. Each is an output people read or match on (log fields, terminal lines), so
// each keeps its form; there is one function per form, and all of them are here.

/**
 * A target within its source, as the sync's log lines name it and as a run keys its lists:
 * `list:variant` (neither a list key nor a variant holds a colon).
 */
export function listVariant(t: Pick<Target, 'variant'> & { list: { key: string } }): string {
  return `${t.list.key}:${t.variant}`;
}

/** A target among every source's, as the worker's log lines and errors name it: `source/list[/variant]`. */
export function targetName(t: Pick<Target, 'variant'> & { source: { name: string }; list: { key: string } }): string {
  return `${t.source.name}/${t.list.key}${t.variant ? `/${t.variant}` : ''}`;
}

/** A target on a terminal line: `charge_codes 2024-06-11`, with its environment first when the run has several sources. */
export function targetLabel(t: Pick<Target, 'variant'> & { source: { environment: string }; list: { key: string } }, withEnvironment: boolean): string {
  const list = `${t.list.key}${t.variant ? ` ${t.variant}` : ''}`;
  return withEnvironment ? `${t.source.environment} ${list}` : list;
}

/** The catalog entry with the source's overrides applied (base paths are a deployment fact, not code). */
export function resolveList(source: SourceConfig, key: ListKey): ListDefinition {
  const base = getListDefinition(key);
  const override = source.listOverrides[key];
  return override ? { ...base, ...override } : base;
}

/** Every target of a source, optionally only for some lists, in catalog order. */
export function targetsFor(source: SourceConfig, only?: readonly ListKey[]): Target[] {
  const keys = only ? source.lists.filter((k) => only.includes(k)) : source.lists;
  const targets: Target[] = [];
  for (const key of keys) {
    const list = resolveList(source, key);
    if (list.variants === 'carrier') {
      for (const carrier of source.carriers) {
        targets.push({ source, list, variant: carrier, path: list.path.replace('{carrier}', carrier) });
      }
    } else if (list.variants === 'charge_code_version') {
      for (const version of source.chargeCodeVersions) {
        const target: Target = { source, list, variant: version, path: list.path };
        if (version !== 'unpinned') target.serviceVersion = version;
        targets.push(target);
      }
    } else {
      targets.push({ source, list, variant: '', path: list.path });
    }
  }
  return targets;
}
