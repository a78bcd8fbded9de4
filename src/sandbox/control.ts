// The switches, in process (SandboxControl) and over HTTP: `POST /__sandbox/<name>` with a JSON
// body and `X-Sandbox-Control: <secret>` (403 without it), `GET /__sandbox/state`.
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SandboxState } from './state.ts';
import { SandboxError } from './types.ts';
import type { Entry, PagingShape, SandboxControl, SandboxFaults, TokenLifetime, VariantSelector } from './types.ts';
import type { DataJournal } from './data-journal.ts';
import { readBody, sendJson } from './http.ts';

export const CONTROL_PREFIX = '/__sandbox/';

export function createControl(state: SandboxState): SandboxControl {
  const { store, faults, auth } = state;
  return {
    setLatency: (ms) => state.setLatency(ms),
    setFaults: (f) => faults.set(f),
    clearFaults: () => faults.clear(),
    setTokenLifetime: (lifetime) => auth.setTokenLifetime(lifetime ?? {}),
    requireApiKey: (paths) => auth.requireApiKey(paths),
    setPaging: (listKey, shape, opts) => store.setPaging(listKey, shape, opts),
    addEntry: (listKey, entry, variant) => store.addEntry(listKey, entry, variant),
    removeEntry: (listKey, entryKey, variant) => store.removeEntry(listKey, entryKey, variant),
    modifyEntry: (listKey, entryKey, patch, variant) => store.modifyEntry(listKey, entryKey, patch, variant),
    renameField: (listKey, from, to) => store.renameField(listKey, from, to),
    removeField: (listKey, field) => store.removeField(listKey, field),
    retypeField: (listKey, field) => store.retypeField(listKey, field),
    addField: (listKey, field, value) => store.addField(listKey, field, value),
    setEntries: (listKey, entries, variant) => store.setEntries(listKey, entries, variant),
    setGenerated: (listKey, count) => store.setGenerated(listKey, count),
    changeGenerated: (listKey, opts) => store.changeGenerated(listKey, opts?.everyNth),
    reset: () => state.reset(),
    getEntries: (listKey, variant) => store.getEntries(listKey, variant),
    listKeys: () => store.listKeys(),
    chargeCodeVersions: () => store.chargeCodeVersions(),
    requestLog: () => state.requestLog(),
    resetRequestLog: () => state.resetRequestLog(),
    state: () => ({
      latencyMs: state.latencyMs,
      faults: faults.view(),
      tokenLifetime: auth.tokenLifetime(),
      requireApiKey: auth.apiKeyOnlyPaths(),
      paging: store.pagingView(),
      generated: store.generatedView(),
      chargeCodeVersions: store.chargeCodeVersions(),
      entryCounts: store.countsView(),
    }),
  };
}

type Body = Record<string, unknown>;

const str = (b: Body, k: string): string => {
  const v = b[k];
  if (typeof v !== 'string') throw new SandboxError(`'${k}' must be a string`);
  return v;
};
const num = (b: Body, k: string): number => {
  const v = b[k];
  if (typeof v !== 'number') throw new SandboxError(`'${k}' must be a number`);
  return v;
};
const obj = (b: Body, k: string): Entry => {
  const v = b[k];
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new SandboxError(`'${k}' must be an object`);
  return v as Entry;
};
const variant = (b: Body): VariantSelector => ({
  ...(typeof b.version === 'string' ? { version: b.version } : {}),
  ...(typeof b.carrier === 'string' ? { carrier: b.carrier } : {}),
});
const listKey = (b: Body): string => (typeof b.listKey === 'string' ? b.listKey : str(b, 'list'));

/** Each control method, called with the JSON body of its POST. */
const httpMethods: Record<string, (c: SandboxControl, b: Body) => unknown> = {
  setLatency: (c, b) => c.setLatency(num(b, 'ms')),
  setFaults: (c, b) => c.setFaults(b as SandboxFaults),
  clearFaults: (c) => c.clearFaults(),
  setTokenLifetime: (c, b) => c.setTokenLifetime(b as TokenLifetime),
  requireApiKey: (c, b) => {
    if (!Array.isArray(b.paths)) throw new SandboxError("'paths' must be an array");
    c.requireApiKey(b.paths as string[]);
  },
  setPaging: (c, b) => c.setPaging(listKey(b), str(b, 'shape') as PagingShape, (b.opts ?? {}) as { defaultPageSize?: number; maxPageSize?: number }),
  addEntry: (c, b) => c.addEntry(listKey(b), obj(b, 'entry'), variant(b)),
  removeEntry: (c, b) => c.removeEntry(listKey(b), str(b, 'entryKey'), variant(b)),
  modifyEntry: (c, b) => c.modifyEntry(listKey(b), str(b, 'entryKey'), obj(b, 'patch'), variant(b)),
  renameField: (c, b) => c.renameField(listKey(b), str(b, 'from'), str(b, 'to')),
  removeField: (c, b) => c.removeField(listKey(b), str(b, 'field')),
  retypeField: (c, b) => c.retypeField(listKey(b), str(b, 'field')),
  addField: (c, b) => c.addField(listKey(b), str(b, 'field'), b.value ?? true),
  setEntries: (c, b) => {
    if (!Array.isArray(b.entries)) throw new SandboxError("'entries' must be an array");
    c.setEntries(listKey(b), b.entries as Entry[], variant(b));
  },
  setGenerated: (c, b) => c.setGenerated(listKey(b), num(b, 'count')),
  changeGenerated: (c, b) => c.changeGenerated(listKey(b), { everyNth: num(b, 'everyNth') }),
  reset: (c) => c.reset(),
  getEntries: (c, b) => c.getEntries(listKey(b), variant(b)),
  listKeys: (c) => c.listKeys(),
  chargeCodeVersions: (c) => c.chargeCodeVersions(),
  requestLog: (c) => c.requestLog(),
  resetRequestLog: (c) => c.resetRequestLog(),
  state: (c) => c.state(),
};

export const controlMethodNames = Object.keys(httpMethods);

/** The switches that change the served data: recorded in the data journal and applied again at a restart. */
export const dataChangingMethods: ReadonlySet<string> = new Set([
  'setPaging',
  'addEntry',
  'removeEntry',
  'modifyEntry',
  'renameField',
  'removeField',
  'retypeField',
  'addField',
  'setEntries',
  'setGenerated',
  'changeGenerated',
]);

/** Applies the journal's changes again, in order: the data as it was when the sandbox last stopped. */
export function replayDataChanges(control: SandboxControl, journal: DataJournal): number {
  const changes = journal.changes();
  for (const change of changes) httpMethods[change.method]?.(control, change.body);
  return changes.length;
}

/** Keeps the journal in step with a switch that succeeded. */
function record(journal: DataJournal | undefined, method: string, body: Body): void {
  if (!journal) return;
  if (method === 'reset') journal.clear();
  else if (dataChangingMethods.has(method)) journal.append({ method, body });
}

function secretMatches(given: string | string[] | undefined, secret: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(secret);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Serves one control API request. Returns the status sent. */
export async function handleControl(
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
  control: SandboxControl,
  secret: string,
  journal?: DataJournal,
): Promise<number> {
  if (!secretMatches(req.headers['x-sandbox-control'], secret)) {
    return sendJson(res, 403, { detail: 'Missing or wrong X-Sandbox-Control header.' });
  }
  const name = pathname.slice(CONTROL_PREFIX.length).replace(/\/$/, '');
  if (name === 'state' && req.method === 'GET') return sendJson(res, 200, control.state());
  const method = httpMethods[name];
  if (!method) return sendJson(res, 404, { detail: `Unknown control method '${name}'.`, methods: controlMethodNames });
  if (req.method !== 'POST') return sendJson(res, 405, { detail: `Method "${req.method}" not allowed.` }, { allow: 'POST' });
  const raw = await readBody(req, 256 * 1024 * 1024);
  if (raw === null) return sendJson(res, 413, { detail: 'Request body too large.' });
  let body: Body = {};
  if (raw.length > 0) {
    try {
      const parsed: unknown = JSON.parse(raw.toString('utf8'));
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
      body = parsed as Body;
    } catch {
      return sendJson(res, 400, { error: 'invalid_json', detail: 'The body must be a JSON object.' });
    }
  }
  try {
    const result = method(control, body);
    record(journal, name, body);
    return sendJson(res, 200, { ok: true, ...(result === undefined ? {} : { result }) });
  } catch (err) {
    if (err instanceof SandboxError) return sendJson(res, 400, { error: 'invalid_request', detail: err.message });
    throw err;
  }
}
