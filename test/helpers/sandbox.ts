// The sandbox for tests: started on a free port, closed after the test file (or earlier by the
// test), with an undici Agent that trusts its throwaway CA.
//
//   const sb = await useSandbox();            // in beforeAll or in a test
//   const agent = sandboxAgent(sb);
//   const token = await sandboxLogin(sb);     // machine@sandbox.test by default
//
// Everything started here is closed in an afterAll registered when this module is imported (at
// the top level of the test file); closing earlier yourself is fine (close() is idempotent).
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { Agent, request } from 'undici';
import { SANDBOX_MACHINE_ACCOUNT, startSandbox, type Sandbox, type SandboxAccount, type SandboxOptions } from '../../src/sandbox/index.ts';

export { SANDBOX_KEYED_ACCOUNT, SANDBOX_MACHINE_ACCOUNT } from '../../src/sandbox/index.ts';
export type { Sandbox } from '../../src/sandbox/index.ts';

const open: Array<{ close(): Promise<void> }> = [];
const agents = new WeakMap<Sandbox, Agent>();

afterAll(async () => {
  const all = open.splice(0);
  await Promise.all(all.map((o) => o.close().catch(() => undefined)));
});

/** Starts a sandbox on a free port (closed after the test file). */
export async function useSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  const sb = await startSandbox({ port: 0, ...opts });
  open.push(sb);
  return sb;
}

/** An undici Agent that trusts the sandbox's CA (one per sandbox, closed with it). */
export function sandboxAgent(sb: Sandbox): Agent {
  let agent = agents.get(sb);
  if (!agent) {
    agent = new Agent({ connect: { ca: sb.caPem } });
    agents.set(sb, agent);
    // destroy, not close: close would wait for requests a stall fault never answers.
    const a = agent;
    open.push({ close: () => a.destroy() });
  }
  return agent;
}

/** Logs in and returns the user token. */
export async function sandboxLogin(sb: Sandbox, account: Pick<SandboxAccount, 'email' | 'password'> = SANDBOX_MACHINE_ACCOUNT): Promise<string> {
  const res = await request(`${sb.url}/v2/auth/token/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: account.email, password: account.password }),
    dispatcher: sandboxAgent(sb),
  });
  const body = (await res.body.json()) as { token?: string };
  if (res.statusCode !== 200 || typeof body.token !== 'string') throw new Error(`sandbox login failed: HTTP ${res.statusCode}`);
  return body.token;
}

export interface SandboxResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json<T = unknown>(): T;
}

/** One request to the sandbox (a path, or an absolute URL such as a `next` link), body read as text. */
export async function sandboxRequest(
  sb: Sandbox,
  pathOrUrl: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; signal?: AbortSignal } = {},
): Promise<SandboxResponse> {
  const url = /^https?:\/\//.test(pathOrUrl) ? pathOrUrl : `${sb.url}${pathOrUrl}`;
  const res = await request(url, {
    method: (init.method ?? 'GET') as 'GET',
    headers: init.headers ?? {},
    ...(init.body !== undefined ? { body: init.body } : {}),
    ...(init.signal ? { signal: init.signal } : {}),
    dispatcher: sandboxAgent(sb),
  });
  const text = await res.body.text();
  return {
    status: res.statusCode,
    headers: res.headers,
    text,
    json: <T>() => JSON.parse(text) as T,
  };
}

/** Calls the HTTP control API: POST /__sandbox/<name> with the secret. */
export async function sandboxControlHttp(sb: Sandbox, name: string, body: unknown = {}, secret = sb.controlSecret): Promise<SandboxResponse> {
  return sandboxRequest(sb, `/__sandbox/${name}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-sandbox-control': secret },
    body: JSON.stringify(body),
  });
}

/**
 * A sandbox for the test file, reset before each test, with the machine account's Authorization
 * header ready for requests made directly (not through the refsync client).
 */
export function useLoggedInSandbox(assign: (sb: Sandbox, auth: Record<string, string>) => void): void {
  let sb: Sandbox | undefined;
  beforeAll(async () => {
    sb = await useSandbox();
    assign(sb, { authorization: `Token ${await sandboxLogin(sb)}` });
  });
  beforeEach(() => sb?.control.reset());
}
