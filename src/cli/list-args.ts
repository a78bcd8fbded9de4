import { isListKey, notAListKey, type ListKey } from '../catalog/list-keys.ts';
import { UsageError } from './args.ts';

/** `--list KEY` values (repeated or comma-separated), each checked against the contract's list keys. */
export function parseListArgs(command: string, values: string[] | undefined): ListKey[] | undefined {
  if (!values?.length) return undefined;
  const keys = values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  for (const key of keys) {
    if (!isListKey(key)) throw new UsageError(`${command}: --list ${notAListKey(key)}`);
  }
  return keys as ListKey[];
}
