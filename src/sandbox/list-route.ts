// GET (or HEAD) of one reference list: the credential, the variant (a carrier in the path, or the
// charge-code version from X-Service-Version or the account's pin), the page, the request's fault,
// then the body, streamed.
import { faultResponse } from './fault-response.ts';
import { sendJson } from './http.ts';
import { listBodyPlan, type PagePosition } from './list-body.ts';
import { CARRIERS, type SandboxList } from './lists.ts';
import { jsonChunks, parsePageParams } from './paging.ts';
import { authenticate, methodNotAllowed, notFound, unauthorized, type RouterContext, type SandboxRequest } from './request.ts';
import type { PagingConfig } from './store.ts';
import { dripBody, writeBody } from './stream.ts';
import type { SandboxAccount, VariantSelector } from './types.ts';

interface Variant {
  selector: VariantSelector;
  /** Response headers that name the variant served. */
  headers: Record<string, string>;
}

/** The variant the request asks for, or the status of the error answer already sent. */
function chooseVariant(ctx: RouterContext, r: SandboxRequest, list: SandboxList, carrier: string | undefined, account: SandboxAccount): Variant | number {
  const { store } = ctx.state;
  const variant: Variant = { selector: {}, headers: {} };
  if (list.variants === 'carrier') {
    if (!carrier || !CARRIERS.includes(carrier) || !store.hasVariant(list.key, carrier)) return notFound(r);
    variant.selector.carrier = carrier;
  }
  if (list.variants === 'version') {
    const asked = r.req.headers['x-service-version'];
    const requested = typeof asked === 'string' && asked.trim() !== '' ? asked.trim() : undefined;
    const version = requested ?? account.chargeCodeVersion ?? store.latestChargeCodeVersion();
    if (!store.hasVariant(list.key, version)) {
      return sendJson(r.res, 400, { error: 'invalid_version', detail: `Unknown service version '${version}'` });
    }
    variant.selector.version = version;
    variant.headers['x-service-version'] = version;
  }
  return variant;
}

/** The page and page size asked for, or null for an invalid page; a list served as one array has no pages. */
function pagePosition(r: SandboxRequest, paging: PagingConfig): PagePosition | null {
  if (paging.shape === 'array') return { page: 1, pageSize: paging.defaultPageSize };
  const params = parsePageParams(r.query, paging);
  return params.ok ? { page: params.page, pageSize: params.pageSize } : null;
}

export async function listRoute(ctx: RouterContext, r: SandboxRequest, list: SandboxList, carrier: string | undefined): Promise<number> {
  if (r.method !== 'GET' && r.method !== 'HEAD') return methodNotAllowed(r, 'GET, HEAD, OPTIONS');
  const auth = authenticate(ctx, r, list.key);
  if (!auth.ok) return unauthorized(r);
  const variant = chooseVariant(ctx, r, list, carrier, auth.account);
  if (typeof variant === 'number') return variant;

  const paging = ctx.state.store.paging(list.key);
  const at = pagePosition(r, paging);
  if (!at) return sendJson(r.res, 404, { detail: 'Invalid page.' });

  const fault = faultResponse(ctx, r, list.key, at.page);
  if (typeof fault === 'number') return fault;
  if (fault === 'stallHeaders') return 0;

  const plan = listBodyPlan(ctx, r, list, variant.selector, paging, at);
  if (!plan) return sendJson(r.res, 404, { detail: 'Invalid page.' });
  r.entry.status = 200;
  r.res.writeHead(200, { 'content-type': 'application/json', ...variant.headers });
  if (r.method === 'HEAD') {
    r.res.end();
    return 200;
  }
  const { dripMs } = ctx.state.faults.listFaults(list.key);
  if (dripMs !== undefined) await dripBody(r.res, jsonChunks(plan), dripMs);
  else await writeBody(r.res, jsonChunks(plan), fault);
  return 200;
}
