import { describe, expect, it } from 'vitest';
import { escapeControls } from '../../src/util/control-chars.ts';

const every = `${Array.from({ length: 0xa0 }, (_, i) => String.fromCharCode(i)).join('')}\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069`;

describe('escapeControls', () => {
  it('leaves tab, newline and printable text alone and writes every other control as \\uXXXX', () => {
    const out = escapeControls(every);
    expect(out).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(out).toContain('\t\n\\u000b');
    expect(out).toContain('\\u001b\\u001c\\u001d\\u001e\\u001f !"#');
    expect(out).toContain('~\\u007f\\u0080');
    expect(out.endsWith('\\u009f\\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069')).toBe(true);
    expect(escapeControls('plain — text ü 日本')).toBe('plain — text ü 日本');
  });

  it('applied to JSON text, leaves the same JSON value', () => {
    const value = { a: every, 'k\u009b': ['\\\u0085', 1] };
    const text = JSON.stringify(value);
    expect(JSON.parse(escapeControls(text))).toEqual(value);
  });
});
