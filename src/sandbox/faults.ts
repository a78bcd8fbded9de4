// Fault switches: which misbehaviour the next matching request gets. Count faults are used up one
// per request; errorRate draws from a seeded sequence so runs repeat; list faults stay until cleared.
import type { SandboxFaults } from './types.ts';
import { SandboxError } from './types.ts';
import { badValueText, checkBadValue } from './bad-values.ts';

/** What a request gets before or instead of its normal response. */
export type Fault =
  | { kind: 'none' }
  | { kind: 'unauthorized' }
  | { kind: 'rateLimit'; retryAfter: string }
  | { kind: 'error' }
  | { kind: 'html' }
  | { kind: 'stallHeaders' }
  | { kind: 'truncate' }
  | { kind: 'stallBody' }
  | { kind: 'resetBody' }
  | { kind: 'errorBody'; status: number; body: string; contentType: string };

/** The list faults that shape one list's body (src/sandbox/list-body.ts). */
export interface ListFaults {
  duplicate?: 'identical' | 'conflicting';
  nextLoop: boolean;
  endless: boolean;
  foreignNext?: string;
  hugeBytes?: number;
  endlessBody: boolean;
  dripMs?: number;
  badValue?: { field: string; json: string };
}

/** The request a fault is chosen for. */
export interface FaultTarget {
  pathname: string;
  listKey: string | null;
  page: number;
}

/** mulberry32: a small seeded PRNG, so errorRate picks the same requests on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const countKeys = ['truncate', 'html', 'stallHeaders', 'stallBody', 'resetBody'] as const;

function checkCount(name: string, n: unknown): void {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw new SandboxError(`faults.${name} must be a non-negative integer`);
}

function checkList(name: string, value: { list?: unknown } | undefined): void {
  if (value && typeof value.list !== 'string') throw new SandboxError(`faults.${name}.list must be a list key`);
}

function checkErrorBody(e: NonNullable<SandboxFaults['errorBody']>): void {
  if (!Number.isInteger(e.status) || e.status < 400 || e.status > 599) throw new SandboxError('faults.errorBody.status must be an HTTP error status (400-599)');
  if (typeof e.body !== 'string') throw new SandboxError('faults.errorBody.body must be a string');
  if (e.contentType !== undefined && typeof e.contentType !== 'string') throw new SandboxError('faults.errorBody.contentType must be a string');
}

export function validateFaults(f: SandboxFaults): void {
  if (!f || typeof f !== 'object' || Array.isArray(f)) throw new SandboxError('faults must be an object');
  if (f.errorRate !== undefined && !(typeof f.errorRate === 'number' && f.errorRate >= 0 && f.errorRate <= 1)) {
    throw new SandboxError('faults.errorRate must be a number from 0 to 1');
  }
  if (f.errorCount !== undefined) checkCount('errorCount', f.errorCount);
  if (f.rateLimit) {
    checkCount('rateLimit.count', f.rateLimit.count);
    if (typeof f.rateLimit.retryAfter !== 'string') throw new SandboxError('faults.rateLimit.retryAfter must be a string (seconds or an HTTP-date)');
  }
  for (const key of countKeys) if (f[key]) checkCount(`${key}.count`, f[key]?.count);
  if (f.unauthorizedOnPage) {
    checkCount('unauthorizedOnPage.count', f.unauthorizedOnPage.count);
    checkCount('unauthorizedOnPage.page', f.unauthorizedOnPage.page);
  }
  if (f.duplicateKey && !['identical', 'conflicting'].includes(f.duplicateKey.mode)) {
    throw new SandboxError("faults.duplicateKey.mode must be 'identical' or 'conflicting'");
  }
  checkList('duplicateKey', f.duplicateKey);
  checkList('nextLoop', f.nextLoop);
  checkList('endlessPages', f.endlessPages);
  checkList('foreignNext', f.foreignNext);
  checkList('hugeBody', f.hugeBody);
  if (f.foreignNext && typeof f.foreignNext.url !== 'string') throw new SandboxError('faults.foreignNext.url must be an absolute URL');
  if (f.hugeBody) checkCount('hugeBody.bytes', f.hugeBody.bytes);
  checkList('endlessBody', f.endlessBody);
  checkList('drip', f.drip);
  if (f.drip && !(typeof f.drip.intervalMs === 'number' && f.drip.intervalMs > 0)) throw new SandboxError('faults.drip.intervalMs must be a number above 0');
  checkList('badValue', f.badValue);
  if (f.badValue) checkBadValue(f.badValue);
  if (f.errorBody) checkErrorBody(f.errorBody);
  if (f.echoLogin !== undefined && !['json', 'collapsed', 'text'].includes(f.echoLogin)) {
    throw new SandboxError("faults.echoLogin must be 'json', 'collapsed' or 'text'");
  }
  if (f.paths !== undefined && !(Array.isArray(f.paths) && f.paths.every((p) => typeof p === 'string'))) {
    throw new SandboxError('faults.paths must be an array of list keys or paths');
  }
}

export class FaultState {
  private faults: SandboxFaults = {};
  private random = prng(1);

  set(faults: SandboxFaults): void {
    validateFaults(faults);
    this.faults = { ...this.faults, ...structuredClone(faults) };
    this.random = prng(1);
  }

  clear(): void {
    this.faults = {};
    this.random = prng(1);
  }

  view(): SandboxFaults {
    return structuredClone(this.faults);
  }

  /** Count faults and errorRate apply to list endpoints, or to the `paths` (list keys or paths) when set. */
  private matches(target: FaultTarget): boolean {
    const paths = this.faults.paths;
    if (!paths) return target.listKey !== null;
    return paths.includes(target.pathname) || (target.listKey !== null && paths.includes(target.listKey));
  }

  /** Chooses (and uses up) the fault for an authenticated request; at most one per request. */
  take(target: FaultTarget): Fault {
    if (!this.matches(target)) return { kind: 'none' };
    const f = this.faults;
    const page = f.unauthorizedOnPage;
    if (page && page.count > 0 && page.page === target.page) {
      page.count--;
      return { kind: 'unauthorized' };
    }
    if (f.rateLimit && f.rateLimit.count > 0) {
      f.rateLimit.count--;
      return { kind: 'rateLimit', retryAfter: f.rateLimit.retryAfter };
    }
    if (f.errorCount && f.errorCount > 0) {
      f.errorCount--;
      return { kind: 'error' };
    }
    if (f.errorRate && this.random() < f.errorRate) return { kind: 'error' };
    if (f.errorBody) {
      const { status, body, contentType } = f.errorBody;
      return { kind: 'errorBody', status, body, contentType: contentType ?? 'text/plain; charset=utf-8' };
    }
    for (const key of countKeys) {
      const fault = f[key];
      if (fault && fault.count > 0) {
        fault.count--;
        return { kind: key };
      }
    }
    return { kind: 'none' };
  }

  /** How a refused login quotes the password, when the echoLogin switch is on. */
  echoLogin(): SandboxFaults['echoLogin'] {
    return this.faults.echoLogin;
  }

  /** The list faults that shape a list's body. */
  listFaults(listKey: string): ListFaults {
    const f = this.faults;
    return {
      ...(f.duplicateKey?.list === listKey ? { duplicate: f.duplicateKey.mode } : {}),
      nextLoop: f.nextLoop?.list === listKey,
      endless: f.endlessPages?.list === listKey,
      ...(f.foreignNext?.list === listKey ? { foreignNext: f.foreignNext.url } : {}),
      ...(f.hugeBody?.list === listKey ? { hugeBytes: f.hugeBody.bytes } : {}),
      endlessBody: f.endlessBody?.list === listKey,
      ...(f.drip?.list === listKey ? { dripMs: f.drip.intervalMs } : {}),
      ...(f.badValue?.list === listKey ? { badValue: { field: f.badValue.field ?? 'remark', json: badValueText(f.badValue) } } : {}),
    };
  }
}
