import { closestName } from '../util/closest-name.ts';

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

/** "did you mean charge_codes? " for a value near a list key (a slip of the keyboard), else ''. */
function nearestHint(value: string): string {
  const near = closestName(value, listKeys);
  return near ? `did you mean ${near}? ` : '';
}

/** Why a value given as a list key (a --list flag, a key of a setting) is not one: the nearest key when it looks like a slip, then every key. */
export function notAListKey(value: string): string {
  return `'${value.slice(0, 80)}' is not a list key (${nearestHint(value)}one of: ${listKeys.join(', ')})`;
}

/** The same for a setting whose error already quotes the value (REFSYNC_LISTS, a usage source's list). */
export function mustBeListKey(value: unknown): string {
  return `${typeof value === 'string' ? nearestHint(value) : ''}must be one of: ${listKeys.join(', ')}`;
}
