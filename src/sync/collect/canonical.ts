import { hash } from 'node:crypto';
import { EntryLimitError, MAX_DEPTH } from './entry-limits.ts';

/** An object shape seen before: its keys as Object.keys gave them, sorted, and JSON-quoted. */
interface Shape {
  keys: string[];
  sorted: string[];
  quoted: string[];
  /**
   * Whether a plain object with the sorted keys inserted in order keeps that order. Integer-like
   * keys do not (JavaScript lists them first, in numeric order), and `__proto__` cannot be set
   * as an own property by assignment.
   */
  rebuildable: boolean;
}

// Entries of one list nearly always share a few shapes, so sorting and quoting their keys once per
// shape, not once per entry, halves the cost of a canonical form (a million entries per P3 sync).
const SHAPES_KEPT = 16;
const shapes: Shape[] = [];
const integerLike = /^\d+$/;

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function shapeOf(keys: string[]): Shape {
  for (const shape of shapes) if (sameKeys(shape.keys, keys)) return shape;
  const sorted = [...keys].sort();
  const rebuildable = !keys.some((k) => k === '__proto__' || integerLike.test(k));
  const shape = { keys, sorted, quoted: sorted.map((k) => JSON.stringify(k)), rebuildable };
  if (shapes.length >= SHAPES_KEPT) shapes.pop();
  shapes.unshift(shape);
  return shape;
}

/** Returned by sortedCopy for a value JSON.stringify would not serialise as the definition does. */
const NOT_COPYABLE = Symbol('not copyable');

/** Checked before each step down, so a hostile nesting fails its list instead of the stack. */
function tooDeep(): EntryLimitError {
  return new EntryLimitError(`nests deeper than ${MAX_DEPTH} levels (limit ${MAX_DEPTH})`);
}

/**
 * The value with every object rebuilt with its keys in sorted order, for JSON.stringify to
 * serialise in one native pass: a flat string, about a third cheaper to build and to hash than
 * one concatenated piece by piece. Gives up on anything where JSON.stringify and the definition
 * differ (undefined members, toJSON, class instances, keys an object would reorder). A number
 * kept as raw JSON (every digit as served) is kept as it is: JSON.stringify writes it verbatim.
 */
function sortedCopy(value: unknown, depth: number): unknown {
  if (value === undefined) return NOT_COPYABLE;
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_DEPTH) throw tooDeep();
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const item = sortedCopy(value[i], depth + 1);
      if (item === NOT_COPYABLE) return NOT_COPYABLE;
      out[i] = item;
    }
    return out;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return NOT_COPYABLE;
  if (proto === null && JSON.isRawJSON(value)) return value;
  const { sorted, rebuildable } = shapeOf(Object.keys(value));
  if (!rebuildable) return NOT_COPYABLE;
  const out: Record<string, unknown> = {};
  for (const key of sorted) {
    const member = sortedCopy((value as Record<string, unknown>)[key], depth + 1);
    if (member === NOT_COPYABLE) return NOT_COPYABLE;
    out[key] = member;
  }
  return out;
}

/** The definition, piece by piece: for the values sortedCopy gives up on. */
function concatenated(value: unknown, depth: number): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (JSON.isRawJSON(value)) return value.rawJSON;
  if (depth > MAX_DEPTH) throw tooDeep();
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i ? ',' : '') + concatenated(value[i], depth + 1);
    return `${out}]`;
  }
  const { sorted, quoted } = shapeOf(Object.keys(value));
  let out = '{';
  for (let i = 0; i < sorted.length; i++) {
    out += `${i ? ',' : ''}${quoted[i]}:${concatenated((value as Record<string, unknown>)[sorted[i]!], depth + 1)}`;
  }
  return `${out}}`;
}

/**
 * JSON with object keys sorted at every depth, so that two entries equal in content serialise to the
 * same bytes whatever key order the service used. Throws EntryLimitError past MAX_DEPTH levels.
 */
export function canonicalJson(value: unknown): string {
  const copy = sortedCopy(value, 1);
  return copy === NOT_COPYABLE ? concatenated(value, 1) : JSON.stringify(copy);
}

/** sha-256 of the canonical entry, base64: the entry's identity of content. */
export function entryDigest(canonical: string): string {
  // The one-shot hash skips building a Hash object per entry (about half the cost of createHash).
  return hash('sha256', canonical, 'base64');
}
