import { listKeys, type ListKey } from './list-keys.ts';

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
