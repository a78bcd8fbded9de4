// A tagged template for server-rendered HTML: every interpolated value goes through escapeHtml
// unless it is itself the result of `html` (already escaped). Upstream text (entry fields, error
// messages) reaches the status page, so no value may be inserted any other way.

export class SafeHtml {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toString(): string {
    return this.text;
  }
}

const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => entities[ch]!);
}

type Value = SafeHtml | string | number | null | undefined | readonly Value[];

function render(value: Value): string {
  if (value === null || value === undefined) return '';
  if (value instanceof SafeHtml) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1]!;
  });
  return new SafeHtml(out);
}
