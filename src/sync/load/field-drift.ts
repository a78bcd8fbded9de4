/** Fields that appeared in or left the list between two snapshots: their signatures (`name:types`) and names. */
export interface FieldDrift {
  added: string[];
  removed: string[];
  /** The names of the fields that appeared or left. */
  names: string[];
  /** The names of the fields that left. */
  removedNames: string[];
}

const nameOf = (signature: string) => signature.slice(0, signature.lastIndexOf(':'));

/**
 * The drift between two snapshots' field signatures, by name: a field whose values took another JSON
 * type is no drift (its column says whether that matters: a nonconforming value, or a change of kind).
 */
export function fieldDrift(before: string[], after: string[]): FieldDrift | undefined {
  const b = new Set(before.map(nameOf));
  const a = new Set(after.map(nameOf));
  const added = after.filter((f) => !b.has(nameOf(f)));
  const removed = before.filter((f) => !a.has(nameOf(f)));
  if (!added.length && !removed.length) return undefined;
  const removedNames = removed.map(nameOf);
  return { added, removed, names: [...added.map(nameOf), ...removedNames], removedNames };
}
