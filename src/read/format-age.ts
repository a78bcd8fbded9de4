/**
 * How long ago `value` was, as a person says it: `just now`, `42 s ago`, `3 min ago`, `5 h ago`,
 * `12 days ago`; a future time reads `in 3 min`. Whole units, rounded down, so an age never reads
 * younger than it is. Empty for no time.
 */
export function formatAge(value: Date | string | null | undefined, now: Date = new Date()): string {
  if (!value) return '';
  const ms = now.getTime() - new Date(value).getTime();
  const seconds = Math.floor(Math.abs(ms) / 1000);
  if (seconds < 5) return 'just now';
  const amount =
    seconds < 60
      ? `${seconds} s`
      : seconds < 3600
        ? `${Math.floor(seconds / 60)} min`
        : seconds < 172_800
          ? `${Math.floor(seconds / 3600)} h`
          : `${Math.floor(seconds / 86_400)} days`;
  return ms >= 0 ? `${amount} ago` : `in ${amount}`;
}
