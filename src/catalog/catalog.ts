// The reference lists as data (their paths, keys, fields and variants), then the targets a source
// syncs: one variant of one list of one source each, and the one name format a target is told by.
import { listKeys, type ListKey } from './list-keys.ts';
import type { SourceConfig } from '../config/types.ts';

/** How a list's variants are formed: none, one per configured carrier, one per charge-code version. */
export type VariantKind = 'none' | 'carrier' | 'charge_code_version';

/**
 * One reference list as the upstream serves it. Data, not code: adding a list is its key in
 * list-keys.ts, its definition here and its data in the sandbox (src/sandbox/lists.ts); the compiler
 * names whichever is missing.
 * `path` may hold `{carrier}`; `keyFields` are joined with '|' when an entry needs a composite key.
 */
export interface ListDefinition {
  key: ListKey;
  basePath: string;
  path: string;
  keyFields: string[];
  codeFields: string[];
  descriptionFields: string[];
  variants: VariantKind;
}

const codeFallbacks = ['code', 'machine_readable', 'value', 'key', 'id', 'name'];
const descriptionFallbacks = ['description', 'name', 'label', 'long_description', 'display_name'];

/** A list's definition from its path and what sets it apart from the usual coded list. */
function list(path: string, extra: Partial<Omit<ListDefinition, 'key' | 'path'>> = {}): Omit<ListDefinition, 'key'> {
  return {
    basePath: '/v2',
    path,
    keyFields: ['code'],
    codeFields: codeFallbacks,
    descriptionFields: descriptionFallbacks,
    variants: 'none',
    ...extra,
  };
}

/**
 * Every list by its key: a key of list-keys.ts without a definition here (or a definition without a
 * key) does not compile. The sandbox's table (src/sandbox/lists.ts) is keyed the same way.
 */
const definitions: Record<ListKey, Omit<ListDefinition, 'key'>> = {
  accessorials: list('/shipments/accessorials/'),
  appointment_types: list('/shipments/appointment-types/'),
  charge_codes: list('/reference-data/charge-codes/', { basePath: '', variants: 'charge_code_version' }),
  charge_line_item_categories: list('/shipments/charge-line-item-categories/'),
  document_types: list('/documents/document-types/'),
  equipment_types: list('/shipments/equipment-types/', { keyFields: ['machine_readable'] }),
  hazmat: list('/shipments/hazmat/'),
  location_types: list('/location-types/'),
  nmfc_codes: list('/shipments/nmfc/', {
    keyFields: ['item', 'sub'],
    codeFields: ['code', 'item'],
  }),
  package_types: list('/shipments/package-types/'),
  carrier_package_types: list('/quoting/{carrier}/package-types/', { variants: 'carrier' }),
  piece_types: list('/shipments/piece-types/'),
  vendor_poc_roles: list('/vendors/vendor-poc-roles/'),
  service_levels: list('/shipments/service-levels/'),
  shipment_modes: list('/shipments/shipment-modes/'),
  shipment_rep_roles: list('/shipments/shipment-rep-roles/'),
  stop_status_reason_codes: list('/shipments/stop-status-reason-codes/'),
  shipment_statuses: list('/shipments/statuses/'),
};

/** The lists in the order of list-keys.ts. */
export const catalog: readonly ListDefinition[] = listKeys.map((key) => ({ key, ...definitions[key] }));

export function getListDefinition(key: ListKey): ListDefinition {
  const found = catalog.find((d) => d.key === key);
  if (!found) throw new Error(`no catalog entry for list '${key}'`);
  return found;
}

// ── Targets: one variant of one list of one source ──

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
