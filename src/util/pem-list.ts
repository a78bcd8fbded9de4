/** Extra CA PEMs as given (none, one, or several) as a list. */
export function pemList(ca: string | string[] | undefined): string[] {
  if (ca === undefined) return [];
  return Array.isArray(ca) ? ca : [ca];
}
