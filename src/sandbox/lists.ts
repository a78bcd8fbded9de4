// The upstream's reference lists as the sandbox serves them: path, default paging shape, variants,
// entry key, bundled data and the generator for large lists. Keyed by the catalog's list keys, so a
// list in the catalog without its data here does not compile; its path and shape are the sandbox's
// own on purpose: it simulates the service, and test/sandbox/lists.test.ts checks that the client's
// catalog asks for the paths it serves (shared, a wrong path would go unnoticed).
import { listKeys, type ListKey } from '../catalog/list-keys.ts';
import type { Entry, PagingShape } from './types.ts';
import { accessorials } from './data/accessorials.ts';
import { chargeCodesByVersion } from './data/charge-codes.ts';
import { generatedNmfc, nmfcCodes } from './data/nmfc.ts';
import * as data from './data/lists.ts';

export type VariantKind = 'none' | 'version' | 'carrier';

export interface SandboxList {
  key: ListKey;
  /** Absolute path; carrier_package_types has `{carrier}` in it. */
  path: string;
  variants: VariantKind;
  shape: PagingShape;
  /** The entry key used by removeEntry/modifyEntry: `code`, `machine_readable`, or `item|sub`. */
  keyOf(entry: Entry): string;
  /** Bundled data per variant ('' when the list has no variants). */
  bundled(): Map<string, Entry[]>;
  /** The i-th generated entry (setGenerated), and its inverse on keys (null: not a generated key). */
  generate(i: number): Entry;
  generatedIndex(key: string): number | null;
}

export const CARRIERS = ['fedex', 'ups', 'usps', 'dhl'];

const str = (v: unknown): string => (v === undefined || v === null ? '' : String(v));
const byCode = (e: Entry): string => str(e.code);

function single(entries: () => Entry[]): () => Map<string, Entry[]> {
  return () => new Map([['', entries()]]);
}

/** Generic generated entries `G0000001`, ... with the fields every coded list has. */
function codedGenerator(prefix: string, extra?: (i: number) => Entry) {
  return {
    generate: (i: number): Entry => ({
      ...(extra ? extra(i) : {}),
      code: `${prefix}${String(i).padStart(7, '0')}`,
      description: `Generated ${prefix} entry ${i}`,
    }),
    generatedIndex: (key: string): number | null => {
      const m = new RegExp(`^${prefix}(\\d{7,})$`).exec(key);
      return m?.[1] ? Number(m[1]) : null;
    },
  };
}

type SandboxListData = Omit<SandboxList, 'key'>;

function coded(path: string, shape: PagingShape, entries: () => Entry[], extra?: (i: number) => Entry): SandboxListData {
  return { path, variants: 'none', shape, keyOf: byCode, bundled: single(entries), ...codedGenerator('G', extra) };
}

const listData: Record<ListKey, SandboxListData> = {
  accessorials: coded('/v2/shipments/accessorials/', 'envelope', accessorials, (i) => ({
    id: 1_000_000 + i,
    long_description: `Generated accessorial ${i}`,
    is_charge_code: i % 2 === 0,
  })),
  appointment_types: coded('/v2/shipments/appointment-types/', 'envelope', data.appointmentTypes),
  charge_codes: {
    path: '/reference-data/charge-codes/',
    variants: 'version',
    shape: 'envelope',
    keyOf: byCode,
    bundled: chargeCodesByVersion,
    ...codedGenerator('G', () => ({ category: 'other' })),
  },
  charge_line_item_categories: coded('/v2/shipments/charge-line-item-categories/', 'next', data.chargeLineItemCategories),
  document_types: coded('/v2/documents/document-types/', 'array', data.documentTypes),
  equipment_types: {
    path: '/v2/shipments/equipment-types/',
    variants: 'none',
    shape: 'envelope',
    keyOf: (e) => str(e.machine_readable),
    bundled: single(data.equipmentTypes),
    generate: (i) => ({ id: 1_000_000 + i, machine_readable: `GEN_${String(i).padStart(7, '0')}`, name: `Generated Equipment ${i}` }),
    generatedIndex: (key) => {
      const m = /^GEN_(\d{7,})$/.exec(key);
      return m?.[1] ? Number(m[1]) : null;
    },
  },
  hazmat: coded('/v2/shipments/hazmat/', 'array', data.hazmat),
  location_types: coded('/v2/location-types/', 'array', data.locationTypes),
  nmfc_codes: {
    path: '/v2/shipments/nmfc/',
    variants: 'none',
    shape: 'next',
    keyOf: (e) => `${str(e.item)}|${str(e.sub)}`,
    bundled: single(nmfcCodes),
    generate: generatedNmfc,
    generatedIndex: (key) => {
      const m = /^(\d{6,})\|(\d?)$/.exec(key);
      if (!m?.[1]) return null;
      const item = Number(m[1]) - 100000;
      const sub = m[2] ? Number(m[2]) : 0;
      return item >= 0 && (m[2] === '' || sub > 0) ? item * 10 + sub : null;
    },
  },
  package_types: coded('/v2/shipments/package-types/', 'envelope', data.packageTypes),
  carrier_package_types: {
    path: '/v2/quoting/{carrier}/package-types/',
    variants: 'carrier',
    shape: 'envelope',
    keyOf: byCode,
    bundled: data.carrierPackageTypes,
    ...codedGenerator('G'),
  },
  piece_types: coded('/v2/shipments/piece-types/', 'array', data.pieceTypes),
  vendor_poc_roles: coded('/v2/vendors/vendor-poc-roles/', 'array', data.vendorPocRoles),
  service_levels: coded('/v2/shipments/service-levels/', 'envelope', data.serviceLevels),
  shipment_modes: coded('/v2/shipments/shipment-modes/', 'envelope', data.shipmentModes),
  shipment_rep_roles: coded('/v2/shipments/shipment-rep-roles/', 'array', data.shipmentRepRoles),
  stop_status_reason_codes: coded('/v2/shipments/stop-status-reason-codes/', 'envelope', data.stopStatusReasonCodes),
  shipment_statuses: coded('/v2/shipments/statuses/', 'envelope', data.shipmentStatuses),
};

/** Every list the sandbox serves, in the catalog's order. */
export const sandboxLists: readonly SandboxList[] = listKeys.map((key) => ({ key, ...listData[key] }));

export function findList(key: string): SandboxList | undefined {
  return sandboxLists.find((l) => l.key === key);
}

export function getList(key: string): SandboxList {
  const list = findList(key);
  if (!list) throw new Error(`unknown list key '${key}'`);
  return list;
}

const carrierPath = /^\/v2\/quoting\/([^/]+)\/package-types\/$/;

/** The list a request path addresses, with the carrier of a carrier path; null when none. */
export function resolveListPath(pathname: string): { list: SandboxList; carrier?: string } | null {
  const carrier = carrierPath.exec(pathname);
  if (carrier?.[1]) {
    const list = getList('carrier_package_types');
    return { list, carrier: decodeURIComponent(carrier[1]) };
  }
  const list = sandboxLists.find((l) => l.path === pathname);
  return list ? { list } : null;
}

/** The concrete path of a list (variant = carrier for carrier_package_types). */
export function listPath(list: SandboxList, carrier = 'fedex'): string {
  return list.path.replace('{carrier}', encodeURIComponent(carrier));
}
