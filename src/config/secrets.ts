import { readFileSync } from 'node:fs';
import { ConfigError } from './errors.ts';
import { refuseControlCharacters, type Sendable } from './sendable.ts';

/**
 * Reads a secret given either as NAME or as NAME_FILE (a path whose contents are the value).
 * Both at once is ambiguous and refused, and so is a value holding a control character (it could
 * not be sent; the error names NAME or NAME_FILE, whichever gave it). The value never appears in an
 * error message.
 */
export function readSecret(
  name: string,
  value: string | undefined,
  file: string | undefined,
  fileName = `${name}_FILE`,
  sendable: Sendable = {},
): string | undefined {
  const hasValue = value !== undefined && value !== '';
  const hasFile = file !== undefined && file !== '';
  if (hasValue && hasFile) throw new ConfigError(`${name} and ${fileName} are both set; set only one`);
  if (!hasFile) {
    if (!hasValue) return undefined;
    refuseControlCharacters(name, value, sendable);
    return value;
  }
  let contents: string;
  try {
    contents = readFileSync(file, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new ConfigError(`${fileName}: cannot read '${file}' (${reason})`);
  }
  // Files written by editors and secret stores usually end in a newline that is not part of the value.
  const trimmed = contents.replace(/\r?\n$/, '');
  if (trimmed === '') throw new ConfigError(`${fileName}: '${file}' is empty`);
  refuseControlCharacters(fileName, trimmed, sendable);
  return trimmed;
}
