// The HTTPS client of the upstream service: login, the pages of a list, retries and their waits,
// over connections kept per client and requests bounded in time.
import type { IncomingHttpHeaders } from 'node:http';
import { errors, type Dispatcher } from 'undici';
import { limitsOf } from '../config/source-limits.ts';
import { silentLogger, type Logger } from '../util/logger.ts';
import { pemList } from '../util/pem-list.ts';
import { positiveOption } from '../util/positive-option.ts';
import {
  Session,
  unusableCredential,
  type AuthAttempt,
  type AuthScheme,
  type Credential,
  type Credentials,
  type LoginResult,
  KeptFailure,
  sharedByEveryRequest,
  sameFailureFor,
} from './auth.ts';
import {
  parseJsonBody,
  readCapped,
  readSnippet,
  summarizeErrorBody,
  readListBody,
  type PageInfo,
  ListBudget,
  type ListLimits,
  MAX_BATCH_BYTES,
  MIN_BATCH_BYTES,
} from './list-body.ts';
import {
  AuthError,
  HttpStatusError,
  ProtocolError,
  UpstreamConfigError,
  UpstreamError,
  DeadlineError,
  NetworkError,
  TimeoutError,
  TlsError,
} from './errors.ts';
import { PageSequence, type PageProgress, checkOrigin } from './paging.ts';
import { listBatch, type ListBatch } from './list-batch.ts';
import { backoffDelay, defaultRetryPolicy, parseRetryAfter, retryableStatuses, sleep, type RetryPolicy } from './retry.ts';
import { secretScrubber } from './scrub.ts';
import { RetryWarnings } from './retry-warnings.ts';
import { leaseAgent, type AgentLease } from './shared-agents.ts';

export type { PageProgress } from './paging.ts';

export interface UpstreamClientOptions {
  /** https origin of the service (no path). `http://` is refused. */
  baseUrl: string;
  /** Label of the environment, only used in logs. */
  environment: string;
  credentials: Credentials;
  /** Extra trusted CA PEM(s), added to Node's default roots. */
  ca?: string | string[];
  /** pino logger; nothing is logged when absent. Headers and bodies are never logged. */
  logger?: Logger;
  /** Entries requested per page (`page-size`). Default 1000. */
  pageSize?: number;
  /**
   * Largest body of an answer read whole (the login, /v2/auth/me/), in bytes. Default 64 MiB. List
   * bodies are streamed and never held whole: `listLimits` bound them instead.
   */
  maxResponseBytes?: number;
  /** Bytes per entry, entries per list, bytes per list (all pages). Defaults: src/config/source-limits.ts. */
  listLimits?: Partial<ListLimits>;
  /** The most one request may take, first byte sent to last byte read (REFSYNC_REQUEST_DEADLINE_S). Default 600 s. */
  requestDeadlineMs?: number;
  /** Most pages one list may have before it is refused as endless. Default 10 000. */
  maxPages?: number;
  /** Defaults: connect 10 s, headers 30 s, body (longest silence between chunks) 60 s. */
  timeouts?: { connectMs?: number; headersMs?: number; bodyMs?: number };
  /** Defaults: 4 attempts in all, backoff base 500 ms, max 30 s, Retry-After waited up to 120 s. */
  retry?: { attempts?: number; baseDelayMs?: number; maxDelayMs?: number; maxRetryAfterMs?: number };
  /** Called after every HTTP exchange (metrics). `status` is null when no response came. */
  onRequest?: (info: { endpoint: string; method: string; status: number | null; durationMs: number; code?: string }) => void;
}

export interface PagesRequest {
  /** '' or a path like `/v2`. */
  basePath: string;
  /** Starts and ends with `/`. */
  path: string;
  /** Sent as X-Service-Version (pinned charge-code version); absent: no header. */
  serviceVersion?: string;
  signal?: AbortSignal;
  /** Told as entries arrive: pages and entries so far, and the totals the service states. */
  onPage?: (progress: PageProgress) => void;
}

/** One list answer being read: its first batch (read within the retries) and the rest to come. */
interface ListPageStream {
  batches: AsyncGenerator<ListBatch, PageInfo>;
  first: IteratorResult<ListBatch, PageInfo>;
}

interface Exchange {
  method: HttpMethod;
  url: URL;
  endpoint: string;
  /** Message prefix: method, endpoint and page. */
  where: string;
  auth: boolean;
  body?: string;
  headers?: Record<string, string>;
  serviceVersion?: string;
  signal?: AbortSignal;
}

const LOGIN_PATH = '/v2/auth/token/';
const ME_PATH = '/v2/auth/me/';

const positive = positiveOption('upstream client', UpstreamConfigError);

function parseOrigin(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new UpstreamConfigError(`upstream base URL '${baseUrl.slice(0, 100)}' is not a URL`);
  }
  if (url.protocol === 'http:') {
    throw new UpstreamConfigError(`upstream base URL ${url.origin}: plain http:// is refused; the upstream is HTTPS only`);
  }
  if (url.protocol !== 'https:') throw new UpstreamConfigError(`upstream base URL must be https://, not ${url.protocol}`);
  if (url.username || url.password) throw new UpstreamConfigError('upstream base URL must not carry user info');
  if (url.pathname !== '/' || url.search || url.hash) {
    throw new UpstreamConfigError(`upstream base URL ${url.origin}: must be an origin with no path or query`);
  }
  return new URL(url.origin);
}

/** The list's path under the origin, once its two parts are checked. */
function listEndpoint({ basePath, path }: PagesRequest): string {
  if (basePath !== '' && (!basePath.startsWith('/') || basePath.endsWith('/'))) {
    throw new UpstreamConfigError(`upstream list base path '${basePath}' must be '' or like /v2`);
  }
  if (!path.startsWith('/') || !path.endsWith('/') || path.includes('?')) {
    throw new UpstreamConfigError(`upstream list path '${path}' must start and end with /`);
  }
  return basePath + path;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The HTTPS client of the upstream service: login and token cache with one re-login and API-key
 * fallback on 401, retries with backoff (a warning per reason, not per retry), size and time
 * limits, and list paging as an async iterator. One client serves every list of a source, so a
 * login that failed for a reason they all share fails them at once (src/upstream/auth.ts). Knows
 * nothing of the database.
 */
export class UpstreamClient {
  readonly #origin: URL;
  readonly #environment: string;
  readonly #connections: ClientConnections;
  readonly #session: Session;
  readonly #credentials: Credentials;
  readonly #logger: Logger;
  readonly #pageSize: number;
  readonly #maxResponseBytes: number;
  readonly #maxPages: number;
  readonly #listLimits: ListLimits;
  readonly #requestDeadlineMs: number;
  readonly #retry: RetryPolicy;
  readonly #onRequest: UpstreamClientOptions['onRequest'];
  readonly #retryWarnings: RetryWarnings;
  /**
   * The host's failure (refused, not resolved, a connect timeout, an untrusted certificate) once a
   * request has given up on it, kept a short while: the source's other requests fail at once with
   * it, where each retried on its own (a worker's lists, with a token in hand, after the host went).
   */
  readonly #hostDown = new KeptFailure(sharedByEveryRequest);

  constructor(options: UpstreamClientOptions) {
    this.#origin = parseOrigin(options.baseUrl);
    this.#environment = options.environment;
    const { credentials } = options;
    if (!credentials.apiKey && !(credentials.email && credentials.password)) {
      throw new UpstreamConfigError(`upstream ${options.environment}: credentials are missing; give an email and password, or an API key`);
    }
    this.#credentials = { ...credentials };
    this.#logger = (options.logger ?? silentLogger).child({ component: 'upstream', environment: options.environment });
    this.#pageSize = Math.floor(positive('pageSize', options.pageSize, 1000));
    this.#maxResponseBytes = positive('maxResponseBytes', options.maxResponseBytes, 64 * 1024 * 1024);
    this.#maxPages = Math.floor(positive('maxPages', options.maxPages, 10_000));
    const defaults = limitsOf({});
    const l = options.listLimits ?? {};
    this.#listLimits = {
      maxEntryBytes: positive('listLimits.maxEntryBytes', l.maxEntryBytes, defaults.maxEntryBytes),
      maxListEntries: positive('listLimits.maxListEntries', l.maxListEntries, defaults.maxListEntries),
      maxListBytes: positive('listLimits.maxListBytes', l.maxListBytes, defaults.maxListBytes),
    };
    this.#requestDeadlineMs = positive('requestDeadlineMs', options.requestDeadlineMs, defaults.requestDeadlineS * 1000);
    const r = options.retry ?? {};
    this.#retry = {
      attempts: Math.floor(positive('retry.attempts', r.attempts, defaultRetryPolicy.attempts)),
      baseDelayMs: positive('retry.baseDelayMs', r.baseDelayMs, defaultRetryPolicy.baseDelayMs),
      maxDelayMs: positive('retry.maxDelayMs', r.maxDelayMs, defaultRetryPolicy.maxDelayMs),
      maxRetryAfterMs: positive('retry.maxRetryAfterMs', r.maxRetryAfterMs, defaultRetryPolicy.maxRetryAfterMs),
    };
    const t = options.timeouts ?? {};
    const timeouts: ConnectionTimeouts = {
      connectMs: positive('timeouts.connectMs', t.connectMs, 10_000),
      headersMs: positive('timeouts.headersMs', t.headersMs, 30_000),
      bodyMs: positive('timeouts.bodyMs', t.bodyMs, 60_000),
    };
    this.#onRequest = options.onRequest;
    this.#connections = new ClientConnections(timeouts, pemList(options.ca));
    this.#session = new Session(this.#credentials, () => this.#login());
    this.#retryWarnings = new RetryWarnings(this.#logger);
  }

  get environment(): string {
    return this.#environment;
  }

  /** Checks the credential with GET /v2/auth/me/: who it belongs to, and which scheme was accepted. */
  async me(): Promise<{ user: Record<string, unknown>; scheme: AuthScheme }> {
    const { json, credential } = await this.#exchange({
      method: 'GET',
      url: new URL(ME_PATH, this.#origin),
      endpoint: ME_PATH,
      where: `GET ${ME_PATH}`,
      auth: true,
    });
    if (!isObject(json)) {
      throw new ProtocolError(`GET ${ME_PATH}: expected a JSON object describing the user`, { endpoint: ME_PATH });
    }
    const user = isObject(json.user) ? json.user : json;
    return { user, scheme: credential!.scheme };
  }

  /**
   * Streams the pages of one list; each yielded batch is that page's entries, or for a page larger
   * than a batch (a bare array of the whole list: batches of at least page-size entries) the
   * next batch of them, which says it continues the page when it is not the page's first: no page is
   * ever held whole as text. The shape is decided per response (bare array, `results` envelope by
   * page number, `next` link; see PageSequence). The generator only completes once the list is
   * whole: a stated total that does not add up throws after the last page, so a consumer must not
   * apply what it received before the generator returned.
   */
  async *pages(request: PagesRequest): AsyncGenerator<ListBatch, void, undefined> {
    const sequence = new PageSequence(listEndpoint(request), { origin: this.#origin, pageSize: this.#pageSize, maxPages: this.#maxPages }, request.onPage);
    const budget = new ListBudget(this.#listLimits);
    let pending = this.#requestPage(request, sequence, budget, sequence.url, 1);
    try {
      for (;;) {
        const { last, pageEntries, page } = yield* this.#handOverPage(await pending, sequence);
        const outcome = sequence.afterPage(page, pageEntries);
        if (outcome.next) {
          // The next page is requested before this one is handed over, so the service prepares it
          // while the consumer normalises and stores this one: one request in flight, never more.
          pending = this.#requestPage(request, sequence, budget, outcome.next, sequence.pageNo + 1);
          yield last;
          sequence.advance(outcome.next);
          continue;
        }
        yield last;
        if (outcome.error) throw outcome.error;
        return;
      }
    } finally {
      // A consumer that stops early leaves a page half read: its body is dropped, not left on the connection.
      pending.then(({ batches }) => batches.return({ shape: 'array' })).catch(() => undefined);
    }
  }

  /** Closes the client's connections; waits for its requests in flight, then forces after 5 s. Idempotent. */
  close(): Promise<void> {
    return this.#connections.close();
  }

  async #login(): Promise<LoginResult> {
    const { json } = await this.#exchange({
      method: 'POST',
      url: new URL(LOGIN_PATH, this.#origin),
      endpoint: LOGIN_PATH,
      where: `POST ${LOGIN_PATH}`,
      auth: false,
      body: JSON.stringify({ email: this.#credentials.email, password: this.#credentials.password }),
    });
    const token = isObject(json) ? json.token : undefined;
    if (typeof token !== 'string' || token === '') {
      throw new ProtocolError(`POST ${LOGIN_PATH}: the login answer has no token`, { endpoint: LOGIN_PATH });
    }
    const apiKey = isObject(json) && typeof json.api_key === 'string' && json.api_key !== '' ? json.api_key : undefined;
    for (const [field, value] of [
      ['token', token],
      ['api_key', apiKey],
    ] as const) {
      const problem = value === undefined ? undefined : unusableCredential(value);
      if (problem)
        throw new ProtocolError(`POST ${LOGIN_PATH}: the login answer's ${field} is not a usable credential (${problem}); refused`, { endpoint: LOGIN_PATH });
    }
    this.#logger.info({ endpoint: LOGIN_PATH }, 'logged in to the upstream');
    return apiKey ? { token, apiKey } : { token };
  }

  /** One request to its JSON answer, read whole within the size cap. */
  async #exchange(ex: Exchange): Promise<{ json: unknown; credential?: Credential }> {
    const { value, credential } = await this.#withRetries(ex, async (res, sendReq, deadline) => {
      let buf: Buffer;
      try {
        buf = await readCapped(res.body, res.headers, this.#maxResponseBytes, ex);
      } catch (err) {
        throw err instanceof UpstreamError ? err : mapTransportError(err, sendReq, 'while reading the body');
      } finally {
        deadline.clear();
      }
      return parseJsonBody(buf, res.headers, ex);
    });
    return credential ? { json: value, credential } : { json: value };
  }

  /**
   * One list page as a stream of entry batches of at most a page size of entries each. Its first
   * batch (for a page of the size asked for, the whole page) is read within the retries; a failure after that fails the list, since part of
   * the page has been handed over.
   */
  async #listPage(ex: Exchange, budget: ListBudget): Promise<ListPageStream> {
    const { value } = await this.#withRetries(ex, async (res, sendReq, deadline) => {
      const limits = { entries: this.#pageSize, minBytes: MIN_BATCH_BYTES, maxBytes: MAX_BATCH_BYTES };
      const body = readListBody(res.body, res.headers, budget, limits, ex, (err) => mapTransportError(err, sendReq, 'while reading the body'));
      const batches = clearedAtEnd(body, deadline);
      return { batches, first: await batches.next() };
    });
    return value;
  }

  /** Requests page `n` of a list; awaited on the next turn of pages(), so a failure until then is not unhandled. */
  #requestPage(request: PagesRequest, sequence: PageSequence, budget: ListBudget, url: URL, n: number): Promise<ListPageStream> {
    sequence.requested(url, n);
    const { endpoint } = sequence;
    const exchange: Exchange = { method: 'GET', url, endpoint, where: `GET ${endpoint} page ${n}`, auth: true };
    if (request.serviceVersion !== undefined) exchange.serviceVersion = request.serviceVersion;
    if (request.signal) exchange.signal = request.signal;
    const pending = this.#listPage(exchange, budget);
    pending.catch(() => undefined);
    return pending;
  }

  /**
   * Yields a page's batches but its last, and returns that one with the page's shape and entry
   * count: each batch is handed over once the next one is read, so the last one (for most pages the
   * only one) is still held when the page's envelope tells where the next page is.
   */
  async *#handOverPage(
    { batches, first }: ListPageStream,
    sequence: PageSequence,
  ): AsyncGenerator<ListBatch, { last: ListBatch; pageEntries: number; page: PageInfo }> {
    let step = first;
    let held: ListBatch | undefined;
    let pageEntries = 0;
    while (!step.done) {
      if (held) yield held;
      held = step.value;
      pageEntries += held.entries.length;
      if (pageEntries > held.entries.length) sequence.partlyRead(pageEntries);
      step = await batches.next();
    }
    return { last: held ?? listBatch([]), pageEntries, page: step.value };
  }

  /**
   * One request with credentials, 401 recovery (bounded by the session), retries of transient
   * failures with backoff; `read` takes a 2xx answer's body and may fail transiently too. Each try
   * has its own request deadline, which `read` clears once the body has been read (for a list page,
   * once its last batch has).
   */
  async #withRetries<T>(
    ex: Exchange,
    read: (res: SendResponse, sendReq: SendRequest, deadline: RequestDeadline) => Promise<T>,
  ): Promise<{ value: T; credential?: Credential }> {
    const authAttempt: AuthAttempt = { reloggedIn: false, keyTried: false };
    for (let attempt = 1; ; ) {
      // After the credential: a list whose login failed so fails with the login's error, as its others do.
      const credential = ex.auth ? await this.#session.credentialFor(ex.endpoint, authAttempt) : undefined;
      const down = this.#hostDown.current();
      if (down) throw sameFailureFor(down, ex.where, ex.endpoint);
      const headers: Record<string, string> = {
        accept: 'application/json',
        'accept-encoding': 'identity',
        'user-agent': 'refsync',
      };
      if (credential) headers.authorization = credential.header;
      if (ex.body !== undefined) headers['content-type'] = 'application/json';
      if (ex.serviceVersion !== undefined) headers['x-service-version'] = ex.serviceVersion;
      const started = performance.now();
      let status: number | null = null;
      const deadline = new RequestDeadline(this.#requestDeadlineMs, ex, ex.signal);
      let bodyHandedOver = false;
      try {
        const sendReq: SendRequest = { method: ex.method, url: ex.url, endpoint: ex.endpoint, where: ex.where, headers, signal: deadline.signal };
        if (ex.body !== undefined) sendReq.body = ex.body;
        const res = await send(this.#connections, this.#origin, sendReq);
        status = res.statusCode;
        if (status >= 200 && status < 300) {
          bodyHandedOver = true;
          const value = await read(res, sendReq, deadline);
          this.#hostDown.succeeded();
          this.#report(ex, status, started);
          if (credential) this.#session.onSuccess(ex.endpoint, credential);
          return credential ? { value, credential } : { value };
        }
        const detail = summarizeErrorBody(await readSnippet(res.body), 200, this.#scrubber());
        if (status === 401 && credential) {
          this.#report(ex, status, started, 'auth');
          await this.#session.onUnauthorized(ex.where, ex.endpoint, credential, authAttempt, detail);
          this.#logger.info({ endpoint: ex.endpoint, reason: authAttempt.keyTried ? 'api key fallback' : 're-login' }, 'upstream answered 401; recovering');
          continue;
        }
        throw this.#statusError(ex, status, res.headers, detail);
      } catch (err) {
        if (!(err instanceof UpstreamError)) throw err;
        // A net under the error bodies scrubbed above: any other message quoting the answer (a JSON parse error) is scrubbed too.
        err.message = this.#scrubber()(err.message);
        if (!(err instanceof AuthError && status === 401 && credential)) this.#report(ex, status, started, err.code);
        const delay = this.#retryDelay(ex, err, attempt);
        if (delay === undefined) {
          this.#hostDown.failed(err);
          throw err;
        }
        this.#retryWarnings.retrying(err, { endpoint: ex.endpoint, where: ex.where, attempt, attempts: this.#retry.attempts, delayMs: delay });
        await sleep(delay, ex.signal);
        attempt++;
      } finally {
        if (!bodyHandedOver) deadline.clear();
      }
    }
  }

  /** How long to wait before trying again, or undefined when the error goes to the caller. */
  #retryDelay(ex: Exchange, err: UpstreamError, attempt: number): number | undefined {
    if (attempt >= this.#retry.attempts || !err.retryable) return undefined;
    if (err.code !== 'network' && err.code !== 'timeout' && err.code !== 'http_status') return undefined;
    // A login is retried only where it surely never reached the service, or was explicitly refused for now.
    if (!ex.auth && err.phase !== 'connect' && err.status !== 429 && err.status !== 503) return undefined;
    if (err.retryAfterMs !== undefined) {
      return err.retryAfterMs > this.#retry.maxRetryAfterMs ? undefined : err.retryAfterMs;
    }
    return backoffDelay(this.#retry, attempt);
  }

  #statusError(ex: Exchange, status: number, headers: IncomingHttpHeaders, detail: string): UpstreamError {
    const suffix = detail ? `: ${detail}` : '';
    const options = { endpoint: ex.endpoint, status };
    if (status >= 300 && status < 400) {
      return new ProtocolError(`${ex.where}: answered ${status} redirect; redirects are not followed (check the base URL and path)`, {
        ...options,
        retryable: false,
      });
    }
    if (!ex.auth && (status === 400 || status === 401 || status === 403)) {
      return new AuthError(`${ex.where}: login refused (${status}${suffix}); check the email and password`, options);
    }
    if (status === 401) return new AuthError(`${ex.where}: 401 without credentials${suffix}`, options);
    if (retryableStatuses.has(status)) {
      const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(headers['retry-after']) : undefined;
      const after = retryAfterMs !== undefined ? ` (Retry-After ${Math.ceil(retryAfterMs / 1000)} s)` : '';
      return new HttpStatusError(`${ex.where}: ${status}${after}${suffix}`, {
        ...options,
        retryable: true,
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      });
    }
    if (ex.serviceVersion !== undefined && status === 400) {
      return new HttpStatusError(`${ex.where}: charge-code version '${ex.serviceVersion}' (X-Service-Version) refused with 400${suffix}`, {
        ...options,
        retryable: false,
      });
    }
    return new HttpStatusError(`${ex.where}: ${status}${suffix}`, { ...options, retryable: status === 408 });
  }

  /** Removes every secret the session holds, in any spelling the service might echo it back in (scrub.ts). */
  #scrubber(): (text: string) => string {
    return secretScrubber(this.#session.secrets());
  }

  #report(ex: Exchange, status: number | null, started: number, code?: string): void {
    const durationMs = Math.round(performance.now() - started);
    this.#logger.debug({ method: ex.method, endpoint: ex.endpoint, where: ex.where, status, durationMs, code }, 'upstream request');
    if (!this.#onRequest) return;
    const info: { endpoint: string; method: string; status: number | null; durationMs: number; code?: string } = {
      endpoint: ex.endpoint,
      method: ex.method,
      status,
      durationMs,
    };
    if (code !== undefined) info.code = code;
    try {
      this.#onRequest(info);
    } catch (err) {
      this.#logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'onRequest callback threw');
    }
  }
}

/** The batches of a list page, its request deadline cleared once they end, are dropped or fail. */
async function* clearedAtEnd(batches: AsyncGenerator<ListBatch, PageInfo>, deadline: RequestDeadline): AsyncGenerator<ListBatch, PageInfo> {
  try {
    return yield* batches;
  } finally {
    deadline.clear();
  }
}

// ── The connections a client keeps ──

export interface ConnectionTimeouts {
  connectMs: number;
  headersMs: number;
  /** Longest silence between two chunks of a body (undici's bodyTimeout is an idle timeout). */
  bodyMs: number;
}

export type ClientRequest = Omit<Dispatcher.RequestOptions, 'headersTimeout' | 'bodyTimeout'>;

/** How long close() waits for the client's requests in flight before it ends them. */
const CLOSE_GRACE_MS = 5000;

/**
 * One client's use of a shared agent (see leaseAgent): its own timeouts on each request, and its own
 * requests in flight, so closing the client waits for (and, after a grace period, ends) only its
 * requests, never another client's on the same sockets. A request is in flight until its response
 * body has closed (read to the end, dropped or failed).
 */
export class ClientConnections {
  readonly #lease: AgentLease;
  readonly #timeouts: ConnectionTimeouts;
  /** One controller per request in flight: a forced close aborts each. */
  readonly #inFlight = new Set<AbortController>();
  #idle: (() => void) | undefined;
  #closing: Promise<void> | undefined;

  constructor(timeouts: ConnectionTimeouts, extraCa: string[]) {
    this.#timeouts = timeouts;
    this.#lease = leaseAgent({ connectMs: timeouts.connectMs, extraCa });
  }

  async request(options: ClientRequest): Promise<Dispatcher.ResponseData> {
    // What the client's own closed agent answered before agents were shared.
    if (this.#closing) throw new errors.ClientClosedError();
    const controller = new AbortController();
    const outer = options.signal as AbortSignal | null | undefined;
    const forward = () => controller.abort(outer!.reason);
    if (outer?.aborted) forward();
    else outer?.addEventListener('abort', forward, { once: true });
    this.#inFlight.add(controller);
    const done = () => {
      outer?.removeEventListener('abort', forward);
      this.#inFlight.delete(controller);
      if (this.#inFlight.size === 0) this.#idle?.();
    };
    try {
      const res = await this.#lease.agent.request({
        ...options,
        signal: controller.signal,
        headersTimeout: this.#timeouts.headersMs,
        bodyTimeout: this.#timeouts.bodyMs,
      });
      res.body.once('close', done);
      return res;
    } catch (err) {
      done();
      throw err;
    }
  }

  /** Refuses new requests, waits for those in flight, ends them after 5 s, then gives the agent back. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#inFlight.size > 0) {
        const idle = new Promise<void>((resolve) => (this.#idle = resolve));
        const force = setTimeout(() => {
          for (const controller of this.#inFlight) controller.abort(new errors.ClientDestroyedError());
        }, CLOSE_GRACE_MS);
        force.unref();
        try {
          await idle;
        } finally {
          clearTimeout(force);
        }
      }
      await this.#lease.release();
    })();
    return this.#closing;
  }
}

// ── The deadline of one request ──

/**
 * The deadline of one request, from its first byte sent to its body's last byte read
 * (REFSYNC_REQUEST_DEADLINE_S). undici's timeouts measure silences only, so an answer that drips
 * a byte at a time would hold a target forever without it. Its signal aborts the request (and the
 * caller's own signal still does); whoever reads the body last clears it.
 */
export class RequestDeadline {
  readonly signal: AbortSignal;
  readonly #timer: NodeJS.Timeout;

  constructor(ms: number, ctx: { where: string; endpoint: string }, outer?: AbortSignal) {
    const controller = new AbortController();
    this.#timer = setTimeout(() => {
      const message = `${ctx.where}: no whole answer within the request deadline of ${ms / 1000} s (REFSYNC_REQUEST_DEADLINE_S: first byte sent to last byte read)`;
      controller.abort(new DeadlineError(message, { endpoint: ctx.endpoint }));
    }, ms);
    this.#timer.unref();
    this.signal = outer ? AbortSignal.any([outer, controller.signal]) : controller.signal;
  }

  clear(): void {
    clearTimeout(this.#timer);
  }
}

// ── Sending one request ──

export type HttpMethod = 'GET' | 'POST';

export interface SendRequest {
  method: HttpMethod;
  url: URL;
  /** Path-only label used in messages and logs. */
  endpoint: string;
  /** Message prefix: method, endpoint and page. */
  where: string;
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

export type SendResponse = Dispatcher.ResponseData;

/**
 * Sends one request to the configured origin; every low-level failure comes back as an UpstreamError
 * without a header in it. The one place every upstream request leaves from, so the origin check is
 * here: a URL elsewhere (whatever built it) is refused before a byte, and its credential, is sent.
 */
export async function send(connections: ClientConnections, origin: URL, req: SendRequest): Promise<SendResponse> {
  checkOrigin(req.url, origin, req);
  checkHeaderValues(req);
  try {
    return await connections.request({
      origin: origin.origin,
      path: req.url.pathname + req.url.search,
      method: req.method,
      headers: req.headers,
      body: req.body ?? null,
      signal: req.signal ?? null,
    });
  } catch (err) {
    throw mapTransportError(err, req, 'before the response headers');
  }
}

/**
 * Characters no header value may hold (controls but tab; DEL), the ones undici refuses with
 * UND_ERR_INVALID_ARG. Checked here, before undici sees them: besides failing, such a request as
 * the first on a fresh connection pool (undici 8, HTTP/2 allowed) leaves that pool waiting forever,
 * and the pool is shared by every source on the origin (see shared-agents.ts).
 */
const unsendableInHeader = /[\u0000-\u0008\u000a-\u001f\u007f]/;

function checkHeaderValues(req: SendRequest): void {
  for (const [name, value] of Object.entries(req.headers)) {
    if (unsendableInHeader.test(value)) {
      throw new UpstreamConfigError(`${req.where}: the ${name} header would hold a control character (CR, LF, NUL or the like); not sent`, {
        endpoint: req.endpoint,
      });
    }
  }
}

/** Errors of the request as built, not of the network: sending it again cannot help. */
const invalidRequestCodes = new Set([
  'UND_ERR_INVALID_ARG',
  'UND_ERR_NOT_SUPPORTED',
  'ERR_INVALID_ARG_TYPE',
  'ERR_INVALID_ARG_VALUE',
  'ERR_INVALID_CHAR',
  'ERR_INVALID_HTTP_TOKEN',
  'ERR_INVALID_URL',
  'ERR_HTTP_INVALID_HEADER_VALUE',
]);

const tlsTrustCodes = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_CHAIN_TOO_LONG',
  'INVALID_CA',
]);
const connectCodes = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);

function hostOf(url: URL): string {
  return url.host || url.hostname;
}

/** The most specific error code in the cause chain (undici wraps a socket's own error). */
function codeOf(err: unknown): string | undefined {
  let fallback: string | undefined;
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (code !== 'UND_ERR_SOCKET') return code;
      fallback = code;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return fallback;
}

/**
 * Turns an undici/node error into the client's error kinds. `when` says what the client was doing
 * ("before the response headers", "reading the body") for the message.
 */
export function mapTransportError(err: unknown, req: Pick<SendRequest, 'where' | 'endpoint' | 'url' | 'signal'>, when: string): unknown {
  if (req.signal?.aborted) return req.signal.reason ?? err;
  const code = codeOf(err) ?? '';
  const { where } = req;
  const host = hostOf(req.url);
  const options = { endpoint: req.endpoint, cause: err };
  if (tlsTrustCodes.has(code)) {
    return new TlsError(`TLS: certificate of ${host} is not trusted (${code}); set REFSYNC_CA_FILE to the CA that signed it`, options);
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'HOSTNAME_MISMATCH') {
    return new TlsError(`TLS: certificate of ${host} does not name that host (${code})`, options);
  }
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
    return new TlsError(`TLS: certificate of ${host} is not valid now (${code})`, options);
  }
  if (invalidRequestCodes.has(code)) {
    return new UpstreamConfigError(`${where}: the request cannot be sent as built (${code}); not retried`, options);
  }
  if (code.startsWith('ERR_OSSL_')) {
    // OpenSSL refusing a key, certificate or context: the TLS settings are wrong, not the network.
    return new TlsError(`TLS: the TLS settings for ${host} are not usable (${code}); check REFSYNC_CA_FILE`, options);
  }
  if (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || code === 'EPROTO') {
    return new TlsError(`TLS: handshake with ${host} failed (${code}); is it an HTTPS server?`, options);
  }
  if (code === 'UND_ERR_CONNECT_TIMEOUT') {
    return new TimeoutError(`${where}: connect to ${host} timed out`, { ...options, phase: 'connect' });
  }
  if (code === 'UND_ERR_HEADERS_TIMEOUT') {
    return new TimeoutError(`${where}: no response headers within the headers timeout`, { ...options, phase: 'response' });
  }
  if (code === 'UND_ERR_BODY_TIMEOUT') {
    return new TimeoutError(`${where}: response body stalled beyond the body timeout`, { ...options, phase: 'response' });
  }
  if (connectCodes.has(code)) {
    return new NetworkError(`${where}: cannot connect to ${host} (${code})`, { ...options, phase: 'connect' });
  }
  if (code.startsWith('HPE_') || code === 'UND_ERR_INFO') {
    return new ProtocolError(`${where}: malformed HTTP response ${when} (${code})`, { ...options, retryable: true });
  }
  const detail = code || (err instanceof Error ? err.message.slice(0, 80) : 'unknown error');
  return new NetworkError(`${where}: connection failed ${when} (${detail})`, { ...options, phase: 'response' });
}
