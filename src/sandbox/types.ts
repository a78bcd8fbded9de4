// The sandbox's public types and its error class. Other modules (tests, the demo, benchmarks) code
// against these names. Every module of the sandbox may import this file, so it imports none of them.
import type { Logger } from '../util/logger.ts';

/** A bad argument to the sandbox (a control call, a fault, an account): HTTP 400 on the control API. */
export class SandboxError extends Error {
  readonly code = 'sandbox';
}

/** The named values of the badValue fault (their JSON texts are in bad-values.ts). */
export type BadValueKind = 'nul' | 'surrogate' | 'surrogateKey' | 'deep' | 'bigNumbers' | 'longString' | 'longKey';

/** A fake account of the sandbox. Its password and key are sandbox-only values, not secrets. */
export interface SandboxAccount {
  email: string;
  password: string;
  userId: number;
  apiKey: string | null;
  /** Account-level pinned charge-code version (the "company setting" of the spec). */
  chargeCodeVersion?: string;
}

export interface SandboxOptions {
  /** 0 = a free port (the default here; the CLI defaults to 8443). */
  port?: number;
  /** Default '127.0.0.1'. */
  host?: string;
  /** Default: DEFAULT_ACCOUNTS. */
  accounts?: SandboxAccount[];
  /** Required in the `X-Sandbox-Control` header of the control API. Default: random. */
  controlSecret?: string;
  /** Added before every upstream response (not the control API). */
  latencyMs?: number;
  /** Every response is logged at debug level; never a credential. */
  logger?: Logger;
  /**
   * Where the CA PEM is written, with the server certificate and key: a restart with the same folder
   * serves the same certificate (cert-files.ts). Default: a fresh mkdtemp directory, removed on close.
   */
  certDir?: string;
  /** A file recording data switches, applied again at start (data-journal.ts). Default: none. */
  dataFile?: string;
  /** Extra names the server certificate is valid for (e.g. a compose service name). */
  hostnames?: string[];
}

export interface Sandbox {
  /** 'https://127.0.0.1:PORT': the origin, no path (on a wildcard host, the loopback address of its family). */
  url: string;
  port: number;
  /** The address the server is bound to, as the operating system reports it, and whether it is loopback only. */
  listening: { address: string; port: number; loopback: boolean };
  /** PEM of the throwaway CA that signed the server certificate. */
  caPem: string;
  /** Path of that PEM on disk. */
  caFile: string;
  controlSecret: string;
  /** The switches of the HTTP control API, in process. */
  control: SandboxControl;
  /** Total requests received (all paths, the control API included). */
  requestCount(): number;
  /** Closes the server and every open socket. Idempotent. */
  close(): Promise<void>;
}

export type PagingShape = 'array' | 'envelope' | 'next';

export interface PagingOptions {
  defaultPageSize?: number;
  maxPageSize?: number;
}

/** Selects a variant: the charge-code version, or the carrier of carrier_package_types. */
export interface VariantSelector {
  version?: string;
  carrier?: string;
}

export interface CountFault {
  count: number;
}

/**
 * Faults. Count faults (`errorCount`, `rateLimit`, `truncate`, `html`, `stallHeaders`, `stallBody`,
 * `resetBody`, `unauthorizedOnPage`) are used up one per matching request; `errorRate` and the
 * per-list faults stay until `clearFaults()`. `setFaults` merges into the faults already set.
 */
export interface SandboxFaults {
  /** 0..1: share of matching requests answered 500 (deterministic pseudo-random sequence). */
  errorRate?: number;
  /** The next N matching requests answer 500. */
  errorCount?: number;
  /** The next `count` matching requests answer 429 with `Retry-After: retryAfter`. */
  rateLimit?: { count: number; retryAfter: string };
  /** 200 whose JSON body ends half way (the chunked response itself completes). */
  truncate?: CountFault;
  /** 200 with a text/html page (a proxy's or a login page). */
  html?: CountFault;
  /** The request is accepted and never answered (no status line). */
  stallHeaders?: CountFault;
  /** Status line, headers and part of the body are sent, then nothing more. */
  stallBody?: CountFault;
  /** Part of the body is sent, then the socket is destroyed. */
  resetBody?: CountFault;
  /** Requests for page `page` (1-based; a bare-array list is page 1) answer 401, `count` times. */
  unauthorizedOnPage?: { page: number; count: number };
  /** The list serves one key twice, with the same or a different payload. */
  duplicateKey?: { list: string; mode: 'identical' | 'conflicting' };
  /** The `next` link points back at the same page. */
  nextLoop?: { list: string };
  /** Pages never end: each page claims another one and serves filler entries past the data. */
  endlessPages?: { list: string };
  /** The `next` link points at another origin (`url`, absolute). */
  foreignNext?: { list: string; url: string };
  /** The body is padded with one more entry until it is at least `bytes` long, streamed. */
  hugeBody?: { list: string; bytes: number };
  /** The body's entries never end: after the list's own, generated ones follow for as long as the client reads. */
  endlessBody?: { list: string };
  /**
   * Status line and headers at once, then the body one byte every `intervalMs`: never silent for
   * long enough to trip an idle timeout, never done in useful time.
   */
  drip?: { list: string; intervalMs: number };
  /**
   * The list's first entry serves `field` (default `remark`) as a value Postgres or JavaScript
   * cannot take as is: a named case (NUL, lone surrogates, 50,000-deep nesting, big numbers, a 1 MB
   * string, a 10 KB key; see bad-values.ts) or any JSON text.
   */
  badValue?: { list: string; kind?: BadValueKind; json?: string; field?: string };
  /**
   * Every matching request (every list, or the `paths`) answers `status` with `body` as its text,
   * `text/plain` unless `contentType` says otherwise: an upstream's own error pages, such as a 404
   * of control characters or emoji. Stays until cleared.
   */
  errorBody?: { status: number; body: string; contentType?: string };
  /**
   * A refused login quotes the password it was sent, as a careless service does: `json` in a JSON
   * `detail` (tabs written \t), `collapsed` the same with each run of whitespace made one space,
   * `text` as a plain-text body.
   */
  echoLogin?: 'json' | 'collapsed' | 'text';
  /** Restricts the count faults and errorRate to these list keys or paths (default: every list). */
  paths?: string[];
}

export interface TokenLifetime {
  /** A token answers 401 after this many authenticated requests. */
  requests?: number;
  /** A token answers 401 this many seconds after login. */
  seconds?: number;
}

export interface RequestLogEntry {
  method: string;
  /** Path without the query string. */
  path: string;
  /** Query string without '?', '' when none. */
  query: string;
  /** 'token' | 'apikey' | 'bearer' | 'basic' | 'unknown' (an unrecognised scheme), null when none. */
  authScheme: string | null;
  /** 0 while (or when) no status line was sent. */
  status: number;
}

export interface SandboxStateView {
  latencyMs: number;
  faults: SandboxFaults;
  tokenLifetime: TokenLifetime;
  requireApiKey: string[];
  paging: Record<string, { shape: PagingShape; defaultPageSize: number; maxPageSize: number }>;
  generated: Record<string, { count: number; everyNth: number[] }>;
  chargeCodeVersions: string[];
  entryCounts: Record<string, number>;
}

export type Entry = Record<string, unknown>;

/**
 * The switches. List keys are those of docs/contract.md. Entry keys: `code`; equipment_types
 * `machine_readable`; nmfc_codes `item|sub` (sub '' when none, e.g. `18810|`).
 * Variant selectors: charge_codes `{version}` (default the latest), carrier_package_types
 * `{carrier}` (default fedex); other lists ignore them. setEntries with a new date version
 * publishes that version. Field drift, setGenerated and changeGenerated act on every variant.
 * Bad arguments throw SandboxError (HTTP: 400).
 */
export interface SandboxControl {
  setLatency(ms: number): void;
  setFaults(faults: SandboxFaults): void;
  clearFaults(): void;
  setTokenLifetime(lifetime: TokenLifetime): void;
  /** Those endpoints (list keys or paths) refuse `Token` with 401 and accept only API-key schemes. */
  requireApiKey(paths: string[]): void;
  setPaging(listKey: string, shape: PagingShape, opts?: PagingOptions): void;
  addEntry(listKey: string, entry: Entry, variant?: VariantSelector): void;
  removeEntry(listKey: string, entryKey: string, variant?: VariantSelector): void;
  modifyEntry(listKey: string, entryKey: string, patch: Entry, variant?: VariantSelector): void;
  renameField(listKey: string, from: string, to: string): void;
  removeField(listKey: string, field: string): void;
  retypeField(listKey: string, field: string): void;
  addField(listKey: string, field: string, value: unknown): void;
  setEntries(listKey: string, entries: Entry[], variant?: VariantSelector): void;
  setGenerated(listKey: string, count: number): void;
  changeGenerated(listKey: string, opts: { everyNth: number }): void;
  /** Bundled data, default paging, no faults, no token lifetime or requireApiKey, initial latency. Keeps the request log and issued tokens. */
  reset(): void;
  /** The entries served (after drift, before faults), copied. */
  getEntries(listKey: string, variant?: VariantSelector): unknown[];
  listKeys(): string[];
  chargeCodeVersions(): string[];
  /** Upstream requests (not the control API), oldest first; never a credential. */
  requestLog(): RequestLogEntry[];
  resetRequestLog(): void;
  /** What GET /__sandbox/state returns. */
  state(): SandboxStateView;
}
