import type { AlertRow } from './outbox.ts';
import type { Target } from '../catalog/targets.ts';
import type { AlertKind } from '../config/types.ts';

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
      ...details,
    },
  };
}
