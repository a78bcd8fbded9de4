// dbt renders descriptions (and most strings of a sources file) as Jinja, so a field named
// `{{ env_var('PGPASSWORD') }}` in a column's description would run when dbt reads the file. Every
// string refsync writes there is made inert: each opening delimiter becomes a Jinja expression that
// prints it, which dbt renders back to the text as served.

/** `text` with every `{{`, `{%` and `{#` written as `{{ '{{' }}` (and so on): Jinja prints them, never runs them. */
export function inertJinja(text: string): string {
  return text.replace(/\{([{%#])/g, "{{ '{$1' }}");
}

/** A copy of a YAML document's tree with every string, keys included, made inert. */
export function inertStrings(value: unknown): unknown {
  if (typeof value === 'string') return inertJinja(value);
  if (Array.isArray(value)) return value.map(inertStrings);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [inertJinja(k), inertStrings(v)]));
}
