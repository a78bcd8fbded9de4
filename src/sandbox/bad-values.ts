// Values real services do emit and Postgres or JavaScript cannot take as they are, served as JSON
// text in one field of a list's first entry (the badValue fault). Written as text, not through
// JSON.stringify: a number must keep digits a double would lose, and a 50,000-deep nesting would
// overflow JSON.stringify's stack.
import { SandboxError, type BadValueKind } from './types.ts';

const DEEP_LEVELS = 50_000;

/** Each case: the JSON text of the value. */
export const badValues = {
  /** U+0000 inside a string: Postgres text and jsonb cannot store it. */
  nul: () => '"before\\u0000after"',
  /** A lone high surrogate inside a string: jsonb refuses it. */
  surrogate: () => '"lone \\ud800 surrogate"',
  /** A lone low surrogate in an object key, one level down. */
  surrogateKey: () => '{"key \\udc00 lone":"value"}',
  /** Arrays nested 50,000 deep. */
  deep: () => `${'['.repeat(DEEP_LEVELS)}${']'.repeat(DEEP_LEVELS)}`,
  /** Integers past 2^53, a decimal longer than a double keeps, exponents out of a double's range. */
  bigNumbers: () =>
    '{"big":12345678901234567891,"negative":-98765432109876543210,"decimal":0.1000000000000000055511151231257827,"huge":1e400,"tiny":1e-400,"plain":1.5}',
  /** A string of 1,000,000 characters. */
  longString: () => `"${'x'.repeat(1_000_000)}"`,
  /** An object key of 10,240 characters. */
  longKey: () => `{"${'k'.repeat(10_240)}":1}`,
} satisfies Record<BadValueKind, () => string>;

export function checkBadValue(f: { list?: unknown; kind?: unknown; json?: unknown; field?: unknown }): void {
  if (f.kind !== undefined && !Object.hasOwn(badValues, String(f.kind))) {
    throw new SandboxError(`faults.badValue.kind must be one of ${Object.keys(badValues).join(', ')}`);
  }
  if ((f.kind === undefined) === (f.json === undefined)) throw new SandboxError('faults.badValue needs a kind or a json text (one of them)');
  if (f.json !== undefined && typeof f.json !== 'string') throw new SandboxError('faults.badValue.json must be JSON text');
  if (f.field !== undefined && typeof f.field !== 'string') throw new SandboxError('faults.badValue.field must be a field name');
}

/** The JSON text the fault serves. */
export function badValueText(f: { kind?: BadValueKind; json?: string }): string {
  return f.json ?? badValues[f.kind!]();
}
