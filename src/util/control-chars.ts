// Text from the upstream is data: written to a terminal it must not become control. C0 controls
// other than tab and newline, DEL, C1 controls (U+0080-U+009F: a terminal may read U+009B as CSI)
// and the bidi overrides and isolates (which reorder what a reader sees) are shown escaped.
const controls = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` with every control character written as `\uXXXX`. The escape is also JSON's, so applied to
 * JSON text (where such characters may only appear inside strings) it leaves the same JSON value.
 */
export function escapeControls(text: string): string {
  controls.lastIndex = 0;
  if (!controls.test(text)) return text;
  return text.replace(controls, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
