// The descriptions of the per-list views (refdata.<list>, refdata.<list>_history): their columns and the
// words of their COMMENTs, the contract's columns first, then one per typed column. The views are
// created from these (src/columns/list-views.ts) and dbt's sources.yml describes them with the same
// words (src/dbt/descriptions.ts, which describes every other relation of schema refdata).
import { getListDefinition } from '../catalog/catalog.ts';
import type { ListKey } from '../catalog/list-keys.ts';
import { foldFieldName } from './column-name.ts';
import { sqlType } from './column-type.ts';
import type { TypedColumn } from './typed-column.ts';

export interface ColumnDescription {
  name: string;
  description: string;
  /** The Postgres type, given for the typed columns (dbt's data_type). */
  dataType?: string;
}

export interface RelationDescription {
  name: string;
  kind: 'view' | 'table';
  description: string;
  columns: ColumnDescription[];
  /** The columns that identify a row: unique together, none null. */
  key: string[];
  /**
   * For a list whose entries are keyed by several fields (nmfc_codes: item and sub), the typed
   * columns of those fields with the environment and variant: the key a join should use.
   */
  fieldKey?: string[];
}

const listViewDescriptions: Record<ListKey, string> = {
  accessorials: 'Current pickup and delivery accessorials.',
  appointment_types: 'Current pickup and delivery appointment types.',
  charge_codes: 'Current charge codes of the versioned charge-code standard, one set per kept version.',
  charge_line_item_categories: 'Current charge line item categories.',
  document_types: 'Current supported document types.',
  equipment_types: 'Current equipment (trailer/container) types.',
  hazmat: 'Current hazardous material classes and divisions.',
  location_types: 'Current location type codes.',
  nmfc_codes: 'Current National Motor Freight Classification items.',
  package_types: 'Current package types of the platform.',
  carrier_package_types: 'Current package types of each carrier.',
  piece_types: 'Current piece types.',
  vendor_poc_roles: 'Current vendor point-of-contact roles and job titles.',
  service_levels: 'Current service levels.',
  shipment_modes: 'Current shipment modes (LTL, FTL, PARCEL, ...).',
  shipment_rep_roles: 'Current shipment representative roles.',
  stop_status_reason_codes: 'Current stop status reason codes.',
  shipment_statuses: 'Current shipment statuses (states).',
};

/** The variant column of a list view: named after what the variant is for that list. */
export function variantColumn(key: ListKey): ColumnDescription {
  if (key === 'charge_codes') {
    return { name: 'version', description: 'Charge-code version: a date sent as X-Service-Version, or unpinned (the account setting, else the latest).' };
  }
  if (key === 'carrier_package_types') {
    return { name: 'carrier', description: 'Carrier the package types belong to (fedex, ups, usps, dhl, ...).' };
  }
  return { name: 'variant', description: "Always '' for this list." };
}

export const environment = 'Environment label of the source (sandbox, production, ...).';
const currentColumns = {
  entry_key: "The entry's identity within its list.",
  code: "The entry's code as other APIs reference it.",
  description: 'Human-readable description.',
  payload: 'The whole entry as served, unknown fields included.',
  valid_from: 'Since when this version of the entry has been current.',
};
export const currentTail = (): ColumnDescription[] => Object.entries(currentColumns).map(([name, description]) => ({ name, description }));
const nonconforming: ColumnDescription = {
  name: 'nonconforming',
  description:
    "The entry's values that do not fit their typed column's type, as an object of column name to value as served (NULL in the typed column, kept in payload); null when every value fits.",
};

/** A typed column's comment: the field as served, its inferred type, and since when it is there. */
export function typedColumnDescription(c: TypedColumn): string {
  const type = c.type === 'null' ? 'text (only nulls served so far)' : c.type;
  const since = c.since.toISOString().slice(0, 10);
  const origin = c.sinceSnapshot === null ? 'inferred from the stored history' : `snapshot ${c.sinceSnapshot}`;
  return `Field ${JSON.stringify(c.field)} as served, typed ${type} (inferred from its values); since ${since} (${origin}).`;
}

function typedColumns(typed: readonly TypedColumn[]): ColumnDescription[] {
  return typed.map((c) => ({ name: c.column, description: typedColumnDescription(c), dataType: sqlType(c.type) }));
}

/**
 * The typed columns of a list's key fields, when they are several (entry_key joins them with '|').
 * A key field is always served, so its column exists once the list was synced; its name follows
 * the naming rule for a field seen first (src/columns/column-name.ts).
 */
function fieldKeyColumns(key: ListKey, contractColumns: readonly string[], typed: readonly TypedColumn[]): string[] | undefined {
  const { keyFields } = getListDefinition(key);
  if (keyFields.length < 2) return undefined;
  return keyFields.map((field) => {
    const recorded = typed.find((c) => c.field === field)?.column;
    const folded = foldFieldName(field);
    return recorded ?? (contractColumns.includes(folded) ? `${folded}_field` : folded);
  });
}

/** The current entries of one list (refdata.<list>): the contract's columns first, then one per field. */
export function listView(key: ListKey, typed: readonly TypedColumn[] = []): RelationDescription {
  const variant = variantColumn(key);
  const contract = [{ name: 'environment', description: environment }, variant, ...currentTail(), nonconforming];
  const columns = [...contract, ...typedColumns(typed)];
  const fields = fieldKeyColumns(
    key,
    contract.map((c) => c.name),
    typed,
  );
  return {
    name: key,
    kind: 'view',
    description: listViewDescriptions[key],
    columns,
    key: ['environment', variant.name, 'entry_key'],
    ...(fields ? { fieldKey: ['environment', variant.name, ...fields] } : {}),
  };
}

/** Every version of the entries of one list (refdata.<list>_history), typed like the current view. */
export function listHistoryView(key: ListKey, typed: readonly TypedColumn[] = []): RelationDescription {
  const variant = variantColumn(key);
  return {
    name: `${key}_history`,
    kind: 'view',
    description: `Every version of every entry of ${key}, with the typed columns of refdata.${key}: valid from valid_from until valid_to (null while current). As of time t: valid_from <= t and (valid_to is null or valid_to > t).`,
    columns: [
      { name: 'environment', description: environment },
      variant,
      ...currentTail().map((c) => (c.name === 'valid_from' ? { name: 'valid_from', description: 'When this version of the entry became current.' } : c)),
      { name: 'valid_to', description: 'When this version stopped being current; null while it is current.' },
      nonconforming,
      ...typedColumns(typed),
    ],
    key: ['environment', variant.name, 'entry_key', 'valid_from'],
  };
}
