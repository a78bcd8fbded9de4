// Catalog overrides become part of the URL every list request (and its credential) is sent to,
// so they are checked as strictly as code would be: a plain path of the configured origin, nothing
// a URL parser could read as another host, another directory or another request.

const placeholder = '{carrier}';

/** Letters, digits, `-._~` and `/`: all a reference-data path needs (RFC 3986 unreserved + '/'). */
const plainPath = /^[A-Za-z0-9\-._~/]*$/;

function firstProblem(value: string): string | undefined {
  // Control characters (C0, DEL, C1), whitespace and Unicode format characters (bidi overrides).
  if (/[\p{Cc}\p{Cf}\s]/u.test(value)) return 'holds a control character or whitespace';
  if (value.includes('\\')) return 'holds a backslash (URLs read \\ as /, so it could reach another host)';
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(value)) return 'is an absolute URL; give a path on REFSYNC_BASE_URL';
  if (value.startsWith('//')) return 'is protocol-relative (starts with //), so it would leave the configured origin';
  if (value.includes('@')) return "holds '@' (user info)";
  if (/%(2f|5c|2e|25|[01][0-9a-f]|7f)/i.test(value)) return 'holds a percent-encoded slash, backslash, dot, percent sign or control character';
  if (value.includes('?') || value.includes('#')) return 'holds a query or fragment';
  if (value.split('/').some((segment) => segment === '.' || segment === '..')) return "holds a '.' or '..' segment";
  const rest = value.split(placeholder).join('');
  const bad = [...rest].find((c) => !plainPath.test(c));
  if (bad !== undefined) return `holds '${bad}'; a list path may hold only letters, digits, - . _ ~ / and ${placeholder}`;
  return undefined;
}

/** What is wrong with a catalog `path` (starts and ends with /), or undefined when it is fine. */
export function listPathProblem(value: string): string | undefined {
  return firstProblem(value) ?? (value.startsWith('/') && value.endsWith('/') ? undefined : 'must start and end with /');
}

/** What is wrong with a catalog `basePath` ('' or like /v2), or undefined when it is fine. */
export function basePathProblem(value: string): string | undefined {
  if (value === '') return undefined;
  if (value.includes(placeholder)) return `may not hold ${placeholder}`;
  return firstProblem(value) ?? (value.startsWith('/') && !value.endsWith('/') ? undefined : "must be '' or a path like /v2");
}
