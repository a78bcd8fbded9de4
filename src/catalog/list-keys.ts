/** The list keys of docs/contract.md, fixed names that users and downstream SQL depend on. */
export const listKeys = [
  'accessorials',
  'appointment_types',
  'charge_codes',
  'charge_line_item_categories',
  'document_types',
  'equipment_types',
  'hazmat',
  'location_types',
  'nmfc_codes',
  'package_types',
  'carrier_package_types',
  'piece_types',
  'vendor_poc_roles',
  'service_levels',
  'shipment_modes',
  'shipment_rep_roles',
  'stop_status_reason_codes',
  'shipment_statuses',
] as const;

export type ListKey = (typeof listKeys)[number];

export function isListKey(value: string): value is ListKey {
  return (listKeys as readonly string[]).includes(value);
}
