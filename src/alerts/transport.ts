import type { LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { restrictedReason } from './address.ts';

/** A webhook target refused by the SSRF guard; the request never left the process. */
export class RestrictedAddressError extends Error {
  readonly code = 'restricted_address';
}

export interface WebhookTimeouts {
  /** DNS lookup plus TCP and TLS handshake. */
  connectMs: number;
  /** From the request sent to the response headers. */
  headersMs: number;
  /** Longest silence while the response body is read. */
  bodyMs: number;
}

export interface WebhookAgentOptions {
  allowPrivate: boolean;
  timeouts: WebhookTimeouts;
  /** Extra trusted CA PEM(s), added to Node's default roots. */
  ca?: string[];
}

/**
 * Checks an address list: with allowPrivate every address is fine; otherwise only public ones
 * remain, and none left is a refusal naming what was found.
 */
export function allowedAddresses(host: string, addresses: string[], allowPrivate: boolean): string[] {
  if (allowPrivate) return addresses;
  const allowed = addresses.filter((a) => restrictedReason(a) === null);
  if (allowed.length > 0) return allowed;
  const found = addresses.map((a) => `${a} is ${restrictedReason(a)}`).join(', ') || 'no address';
  throw new RestrictedAddressError(`webhook host ${host} refused: ${found}; set REFSYNC_WEBHOOK_ALLOW_PRIVATE=true to allow it`);
}

type LookupCallback = (err: Error | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net/tls.connect that resolves the name, drops the addresses the guard refuses
 * and hands the rest to the socket, so the address checked is the address connected to (no DNS
 * rebinding window between a check and the connection).
 */
function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    lookup(hostname, { all: true, verbatim: true }).then(
      (found) => {
        let addresses: LookupAddress[];
        try {
          const allowed = new Set(
            allowedAddresses(
              hostname,
              found.map((a) => a.address),
              allowPrivate,
            ),
          );
          addresses = found.filter((a) => allowed.has(a.address));
        } catch (err) {
          callback(err as Error, []);
          return;
        }
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (err: Error) => callback(err, []),
    );
  };
}

/**
 * The HTTP agent of the webhook channel. Host names are resolved and checked inside the socket's
 * connect (guardedLookup); an IP literal, which sockets never look up, is checked before the
 * connect. TLS verifies the certificate against the URL's host. Redirects are never followed:
 * undici's plain agent does not follow them.
 */
export function createWebhookAgent(options: WebhookAgentOptions): Agent {
  const connectOptions: { timeout: number; allowH2: boolean; lookup: ReturnType<typeof guardedLookup>; secureContext?: SecureContext } = {
    timeout: options.timeouts.connectMs,
    allowH2: false,
    lookup: guardedLookup(options.allowPrivate),
  };
  // One TLS context for the agent, as the upstream transport does: given `ca` per connection, Node
  // parses the ~140 default roots again for every new socket.
  if (options.ca?.length) connectOptions.secureContext = createSecureContext({ ca: [...rootCertificates, ...options.ca] });
  const base = buildConnector(connectOptions as buildConnector.BuildOptions);
  const connect: buildConnector.connector = (opts, callback) => {
    const host = opts.hostname.startsWith('[') ? opts.hostname.slice(1, -1) : opts.hostname;
    if (isIP(host)) {
      try {
        allowedAddresses(host, [host], options.allowPrivate);
      } catch (err) {
        callback(err as Error, null);
        return;
      }
    }
    base(opts, callback);
  };
  return new Agent({
    connect,
    headersTimeout: options.timeouts.headersMs,
    bodyTimeout: options.timeouts.bodyMs,
    connections: 4,
  });
}

export interface WebhookResponse {
  status: number;
  headers: Dispatcher.ResponseData['headers'];
  /** The first bytes of the body as text (for the error message). */
  snippet: string;
}

const SNIPPET_BYTES = 512;

/** POSTs one body; reads at most a short snippet of the answer and discards the rest. */
export async function postWebhook(agent: Agent, url: URL, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<WebhookResponse> {
  const res = await agent.request({
    origin: url.origin,
    path: url.pathname + url.search,
    method: 'POST',
    headers,
    body,
    signal,
  });
  let snippet = '';
  let bytes = 0;
  try {
    for await (const chunk of res.body) {
      const buf = chunk as Buffer;
      if (bytes < SNIPPET_BYTES) snippet += buf.subarray(0, SNIPPET_BYTES - bytes).toString('utf8');
      bytes += buf.length;
      if (bytes >= SNIPPET_BYTES) break;
    }
  } finally {
    // Leaving early destroys the body; the connection is not reused, which is fine for alerts.
    res.body.destroy();
  }
  return { status: res.statusCode, headers: res.headers, snippet };
}
