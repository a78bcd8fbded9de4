import type { ListKey } from './list-keys.ts';

/** How a list's variants are formed: none, one per configured carrier, one per charge-code version. */
export type VariantKind = 'none' | 'carrier' | 'charge_code_version';

/**
 * One reference list as the upstream serves it. Data, not code: adding a list is one entry here.
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

function list(key: ListKey, path: string, extra: Partial<ListDefinition> = {}): ListDefinition {
  return {
    key,
    basePath: '/v2',
    path,
    keyFields: ['code'],
    codeFields: codeFallbacks,
    descriptionFields: descriptionFallbacks,
    variants: 'none',
    ...extra,
  };
}

export const catalog: readonly ListDefinition[] = [
  list('accessorials', '/shipments/accessorials/'),
  list('appointment_types', '/shipments/appointment-types/'),
  list('charge_codes', '/reference-data/charge-codes/', { basePath: '', variants: 'charge_code_version' }),
  list('charge_line_item_categories', '/shipments/charge-line-item-categories/'),
  list('document_types', '/documents/document-types/'),
  list('equipment_types', '/shipments/equipment-types/', { keyFields: ['machine_readable'] }),
  list('hazmat', '/shipments/hazmat/'),
  list('location_types', '/location-types/'),
  list('nmfc_codes', '/shipments/nmfc/', {
    keyFields: ['item', 'sub'],
    codeFields: ['code', 'item'],
  }),
  list('package_types', '/shipments/package-types/'),
  list('carrier_package_types', '/quoting/{carrier}/package-types/', { variants: 'carrier' }),
  list('piece_types', '/shipments/piece-types/'),
  list('vendor_poc_roles', '/vendors/vendor-poc-roles/'),
  list('service_levels', '/shipments/service-levels/'),
  list('shipment_modes', '/shipments/shipment-modes/'),
  list('shipment_rep_roles', '/shipments/shipment-rep-roles/'),
  list('stop_status_reason_codes', '/shipments/stop-status-reason-codes/'),
  list('shipment_statuses', '/shipments/statuses/'),
];

export function getListDefinition(key: ListKey): ListDefinition {
  const found = catalog.find((d) => d.key === key);
  if (!found) throw new Error(`no catalog entry for list '${key}'`);
  return found;
}
