import { cutToChars } from './bounded-text.ts';

/** An error as one log-friendly line: its message's first line, at most 300 characters. */
export function errorLine(err: unknown): string {
  return cutToChars((err instanceof Error ? err.message : String(err)).split('\n')[0]!, 300);
}
