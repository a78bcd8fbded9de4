// Numbers as served. JSON.parse turns every number into a double, which rounds an integer past
// 2^53 or a decimal with more than about 16 significant digits, and makes 1e400 Infinity: the
// payload would no longer be the entry as served, and a change in the 17th digit would go unseen.
// Such numbers are kept as JSON.rawJSON (the literal itself), which JSON.stringify writes back
// verbatim and Postgres stores exactly (jsonb numbers are numeric).

type Reviver = (this: unknown, key: string, value: unknown, context?: { source?: string }) => unknown;

/**
 * A number literal that a double may not hold exactly: 16 or more digits and points in a row, or an
 * exponent, where a value starts. Strings can match too (`":1234567890123456"`); that only costs
 * the slower parse of that page.
 */
const unsafeLiteral = /[:,[]\s*-?(?:[\d.]{16}|[\d.]+[eE])/;

const literal = /^(-?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/** The decimal value of a literal as sign, significant digits and exponent: `1.50e2` and `150` agree. */
function decimalValue(text: string): string | undefined {
  const m = literal.exec(text);
  if (!m) return undefined;
  const whole = m[2]!;
  let digits = whole + (m[3] ?? '');
  let exponent = whole.length + Number(m[4] ?? 0);
  let start = 0;
  while (start < digits.length && digits[start] === '0') start++;
  exponent -= start;
  let end = digits.length;
  while (end > start && digits[end - 1] === '0') end--;
  digits = digits.slice(start, end);
  return digits === '' ? '0' : `${m[1]}${digits}e${exponent}`;
}

/** Whether the double parsed from `source` still denotes the number written there. */
function keptExactly(source: string, value: number): boolean {
  if (String(value) === source) return true;
  const served = decimalValue(source);
  return served !== undefined && served === decimalValue(String(value));
}

const keepDigits: Reviver = (_key, value, context) => {
  if (typeof value !== 'number' || context?.source === undefined) return value;
  return keptExactly(context.source, value) ? value : JSON.rawJSON(context.source);
};

/**
 * Parses JSON text with `parse` (JSON.parse or a wrapper taking the same reviver), keeping every
 * number a double would round as raw JSON. The reviver costs a call per value, so it is used only
 * when a cheap scan of the text finds a literal that may need it.
 */
export function parseKeepingNumbers(text: string, parse: (reviver: Reviver | null) => unknown): unknown {
  if (!unsafeLiteral.test(text)) return parse(null);
  try {
    return parse(keepDigits);
  } catch (err) {
    // The reviver walks the parsed value recursively and can exhaust the stack on hostile nesting,
    // which plain JSON.parse survives; the entry is then refused by the depth limit, naming it.
    if (err instanceof RangeError) return parse(null);
    throw err;
  }
}
