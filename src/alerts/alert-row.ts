import type { AlertRow } from './outbox.ts';
import type { Target } from '../catalog/catalog.ts';
import type { AlertKind } from '../config/types.ts';
import { cutToBytes } from '../util/bounded-text.ts';

/**
 * The most one string of an alert's details takes, in bytes as JSON text: codes, descriptions,
 * field names and errors come from the upstream, and a digest of 50 entries must stay a digest
 * (a 1 MB description is a valid value, not an alert's text).
 */
export const ALERT_STRING_BYTES = 1000;

/** The details with every string, at any depth, cut to ALERT_STRING_BYTES. */
function boundedDetails(value: unknown): unknown {
  if (typeof value === 'string') return cutToBytes(value, ALERT_STRING_BYTES);
  if (Array.isArray(value)) return value.map(boundedDetails);
  // Only plain objects are walked: a Date or raw JSON number goes into the payload as it is.
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [cutToBytes(k, ALERT_STRING_BYTES), boundedDetails(v)]));
}

/** An outbox row about one target's snapshot: the fields every alert carries, plus the kind's details. */
export function alertFor(target: Target, kind: AlertKind, snapshotId: number, details: Record<string, unknown>): AlertRow {
  const environment = target.source.environment;
  return {
    snapshotId,
    kind,
    environment,
    listKey: target.list.key,
    variant: target.variant,
    payload: {
      kind,
      environment,
      source: target.source.name,
      list_key: target.list.key,
      variant: target.variant,
      snapshot_id: snapshotId,
      ...(boundedDetails(details) as Record<string, unknown>),
    },
  };
}
