// The two auth endpoints: POST /v2/auth/token/ (log in with email and password, with the service's
// validation answers) and GET /v2/auth/me/ (the account behind a credential).
import { publicUser } from './auth.ts';
import { faultResponse, sendJsonEnding } from './fault-response.ts';
import { readBody, sendJson, sendText } from './http.ts';
import { authenticate, methodNotAllowed, unauthorized, type RouterContext, type SandboxRequest } from './request.ts';

export const TOKEN_PATH = '/v2/auth/token/';
export const ME_PATH = '/v2/auth/me/';
const LOGIN_BODY_LIMIT = 64 * 1024;

interface Credentials {
  email: string;
  password: string;
}

/** The login body's email and password, or the status of the error answer already sent. */
async function readCredentials(r: SandboxRequest): Promise<Credentials | number> {
  const raw = await readBody(r.req, LOGIN_BODY_LIMIT);
  if (raw === null) return sendJson(r.res, 413, { detail: 'Request body too large.' });
  const type = (r.req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  let body: unknown = {};
  if (type !== '' && type !== 'application/json') {
    return sendJson(r.res, 415, { detail: `Unsupported media type "${type}" in request.` });
  }
  if (type === 'application/json') {
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch (err) {
      const why = err instanceof Error ? err.message : 'invalid JSON';
      return sendJson(r.res, 400, { detail: `JSON parse error - ${why}` });
    }
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    return sendJson(r.res, 400, { non_field_errors: ['Invalid data. Expected a dictionary, but got list.'] });
  }
  const fields = body as Record<string, unknown>;
  const errors: Record<string, string[]> = {};
  for (const name of ['email', 'password']) {
    const v = fields[name];
    if (v === undefined || v === null) errors[name] = ['This field is required.'];
    else if (typeof v !== 'string') errors[name] = ['Not a valid string.'];
    else if (v.trim() === '') errors[name] = ['This field may not be blank.'];
  }
  if (Object.keys(errors).length > 0) return sendJson(r.res, 400, errors);
  return { email: fields.email as string, password: fields.password as string };
}

/** The answer to a wrong email or password: the service's own, or one quoting the password (the echoLogin switch). */
function refuseLogin(ctx: RouterContext, r: SandboxRequest, { email, password }: Credentials): number {
  const echo = ctx.state.faults.echoLogin();
  if (!echo) return sendJson(r.res, 400, { error: 'invalid_credentials', error_description: 'Unable to log in with provided credentials.' });
  const quoted = echo === 'collapsed' ? password.replace(/\s+/g, ' ') : password;
  const detail = `Unable to log in as ${email} with the password '${quoted}'; check the password '${quoted}' and try again.`;
  if (echo === 'text') return sendText(r.res, 400, detail);
  return sendJson(r.res, 400, { error: 'invalid_credentials', detail });
}

export async function login(ctx: RouterContext, r: SandboxRequest): Promise<number> {
  if (r.method !== 'POST') return methodNotAllowed(r, 'POST, OPTIONS');
  const fault = faultResponse(ctx, r, null, 1);
  if (typeof fault === 'number') return fault;
  if (fault === 'stallHeaders') return 0;
  const credentials = await readCredentials(r);
  if (typeof credentials === 'number') return credentials;
  const result = ctx.state.auth.login(credentials.email, credentials.password);
  if (!result) return refuseLogin(ctx, r, credentials);
  return sendJsonEnding(
    r,
    200,
    {
      token: result.token,
      driver_token: null,
      driver: null,
      user: publicUser(result.account),
      api_key: result.account.apiKey,
    },
    fault,
  );
}

export function me(ctx: RouterContext, r: SandboxRequest): number {
  if (r.method !== 'GET' && r.method !== 'HEAD') return methodNotAllowed(r, 'GET, HEAD, OPTIONS');
  const auth = authenticate(ctx, r, null);
  if (!auth.ok) return unauthorized(r);
  const fault = faultResponse(ctx, r, null, 1);
  if (typeof fault === 'number') return fault;
  if (fault === 'stallHeaders') return 0;
  return sendJsonEnding(r, 200, publicUser(auth.account), fault);
}
