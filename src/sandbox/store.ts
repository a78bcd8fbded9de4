// The sandbox's data: every list's variants (charge-code versions, carriers), their entries, the
// paging shape each list answers with, and generated lists that are computed entry by entry on
// demand so a million entries never sit in memory.
import { SandboxError, type Entry, type PagingOptions, type PagingShape, type VariantSelector } from './types.ts';
import { CARRIERS, getList, sandboxLists, type SandboxList } from './lists.ts';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;

/** A schema change applied to generated entries as they are produced. */
type Drift =
  | { op: 'rename'; from: string; to: string }
  | { op: 'remove'; field: string }
  | { op: 'retype'; field: string }
  | { op: 'add'; field: string; value: unknown };

/** A generated list: entries 0..count-1 from the list's generator, plus edits. */
interface Generated {
  count: number;
  everyNth: number[];
  /** Generated indices removed, ascending. */
  removed: number[];
  patches: Map<number, Entry>;
  drift: Drift[];
}

interface VariantData {
  /** Explicit entries; for a generated variant, the entries added after the generated ones. */
  entries: Entry[];
  generated: Generated | null;
}

export interface PagingConfig {
  shape: PagingShape;
  defaultPageSize: number;
  maxPageSize: number;
}

interface ListState {
  list: SandboxList;
  variants: Map<string, VariantData>;
  paging: PagingConfig;
}

/** Changes the JSON type of a value: number/boolean -> string, numeric string -> number, string -> {text}, object -> JSON text, null -> ''. */
export function retypeValue(value: unknown): unknown {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'string') {
    const n = Number(value);
    return value.trim() !== '' && Number.isFinite(n) ? n : { text: value };
  }
  return JSON.stringify(value);
}

function renameKey(entry: Entry, from: string, to: string): Entry {
  if (!(from in entry)) return entry;
  const out: Entry = {};
  for (const [k, v] of Object.entries(entry)) out[k === from ? to : k] = v;
  return out;
}

function applyDrift(entry: Entry, drift: Drift): Entry {
  switch (drift.op) {
    case 'rename':
      return renameKey(entry, drift.from, drift.to);
    case 'remove': {
      if (!(drift.field in entry)) return entry;
      const { [drift.field]: _dropped, ...rest } = entry;
      return rest;
    }
    case 'retype':
      return drift.field in entry ? { ...entry, [drift.field]: retypeValue(entry[drift.field]) } : entry;
    case 'add':
      return { ...entry, [drift.field]: drift.value };
  }
}

/** Binary search: how many values of the ascending array are <= x. */
function countAtMost(sorted: number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((sorted[mid] ?? Infinity) <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class DataStore {
  private lists = new Map<string, ListState>();

  constructor() {
    this.reset();
  }

  reset(): void {
    this.lists.clear();
    for (const list of sandboxLists) {
      const variants = new Map<string, VariantData>();
      for (const [variant, entries] of list.bundled()) variants.set(variant, { entries, generated: null });
      this.lists.set(list.key, {
        list,
        variants,
        paging: { shape: list.shape, defaultPageSize: DEFAULT_PAGE_SIZE, maxPageSize: MAX_PAGE_SIZE },
      });
    }
  }

  listKeys(): string[] {
    return [...this.lists.keys()];
  }

  private state(listKey: string): ListState {
    const state = this.lists.get(listKey);
    if (!state) throw new SandboxError(`unknown list key '${listKey}'`);
    return state;
  }

  list(listKey: string): SandboxList {
    return this.state(listKey).list;
  }

  /** Charge-code versions, oldest first (ISO dates sort as text). */
  chargeCodeVersions(): string[] {
    return [...this.state('charge_codes').variants.keys()].sort();
  }

  latestChargeCodeVersion(): string {
    const versions = this.chargeCodeVersions();
    return versions[versions.length - 1] ?? '';
  }

  hasVariant(listKey: string, variant: string): boolean {
    return this.state(listKey).variants.has(variant);
  }

  /** The variant a selector names: version (default latest), carrier (default fedex), or ''. */
  variantName(listKey: string, selector: VariantSelector = {}): string {
    const { list } = this.state(listKey);
    if (list.variants === 'version') return selector.version ?? this.latestChargeCodeVersion();
    if (list.variants === 'carrier') return selector.carrier ?? CARRIERS[0] ?? 'fedex';
    return '';
  }

  private variant(listKey: string, selector: VariantSelector = {}, create = false): VariantData {
    const state = this.state(listKey);
    const name = this.variantName(listKey, selector);
    let data = state.variants.get(name);
    if (!data && create && state.list.variants === 'version') {
      if (!/^\d{4}-\d{2}-\d{2}$/.test(name)) throw new SandboxError(`charge-code version '${name}' is not a date (YYYY-MM-DD)`);
      data = { entries: [], generated: null };
      state.variants.set(name, data);
    }
    if (!data) throw new SandboxError(`list '${listKey}' has no variant '${name}'`);
    return data;
  }

  paging(listKey: string): PagingConfig {
    return { ...this.state(listKey).paging };
  }

  setPaging(listKey: string, shape: PagingShape, opts: PagingOptions = {}): void {
    if (!['array', 'envelope', 'next'].includes(shape)) throw new SandboxError(`unknown paging shape '${String(shape)}'`);
    const state = this.state(listKey);
    const positive = (n: number | undefined, name: string): number | undefined => {
      if (n === undefined) return undefined;
      if (!Number.isInteger(n) || n < 1) throw new SandboxError(`${name} must be a positive integer`);
      return n;
    };
    const maxPageSize = positive(opts.maxPageSize, 'maxPageSize') ?? state.paging.maxPageSize;
    const defaultPageSize = positive(opts.defaultPageSize, 'defaultPageSize') ?? state.paging.defaultPageSize;
    state.paging = { shape, defaultPageSize: Math.min(defaultPageSize, maxPageSize), maxPageSize };
  }

  // ---- reading ----

  /** Number of entries the variant serves. */
  size(listKey: string, selector?: VariantSelector): number {
    const data = this.variant(listKey, selector);
    const gen = data.generated;
    return (gen ? gen.count - gen.removed.length : 0) + data.entries.length;
  }

  /** Entries [start, end) of the variant, produced one by one. */
  *slice(listKey: string, selector: VariantSelector | undefined, start: number, end: number): Generator<Entry> {
    const { list } = this.state(listKey);
    const data = this.variant(listKey, selector);
    const gen = data.generated;
    const generatedSize = gen ? gen.count - gen.removed.length : 0;
    const stop = Math.min(end, generatedSize + data.entries.length);
    let pos = Math.max(0, start);
    if (gen && pos < generatedSize) {
      let index = this.generatedIndexAt(gen, pos);
      for (; pos < Math.min(stop, generatedSize); pos++, index++) {
        while (gen.removed.length > 0 && this.isRemoved(gen, index)) index++;
        yield this.generatedEntry(list, gen, index);
      }
    }
    for (; pos < stop; pos++) {
      const entry = data.entries[pos - generatedSize];
      if (entry) yield entry;
    }
  }

  /** Every entry of the variant, as served, copied (for tests to compare row by row). */
  getEntries(listKey: string, selector?: VariantSelector): Entry[] {
    return [...this.slice(listKey, selector, 0, Infinity)].map((e) => structuredClone(e));
  }

  private isRemoved(gen: Generated, index: number): boolean {
    const n = countAtMost(gen.removed, index);
    return n > 0 && gen.removed[n - 1] === index;
  }

  /** The generated index of the pos-th served generated entry (skipping removed ones). */
  private generatedIndexAt(gen: Generated, pos: number): number {
    let index = pos;
    for (;;) {
      const next = pos + countAtMost(gen.removed, index);
      if (next === index) break;
      index = next;
    }
    while (this.isRemoved(gen, index)) index++;
    return index;
  }

  private generatedEntry(list: SandboxList, gen: Generated, index: number): Entry {
    let entry = list.generate(index);
    for (const n of gen.everyNth) {
      if ((index + 1) % n === 0) entry = { ...entry, description: `${String(entry.description)} (revised every ${n})` };
    }
    for (const d of gen.drift) entry = applyDrift(entry, d);
    const patch = gen.patches.get(index);
    return patch ? { ...entry, ...patch } : entry;
  }

  // ---- changing ----

  addEntry(listKey: string, entry: Entry, selector?: VariantSelector): void {
    const { list } = this.state(listKey);
    if (!entry || typeof entry !== 'object' || Array.isArray(entry)) throw new SandboxError('entry must be an object');
    const data = this.variant(listKey, selector, true);
    const key = list.keyOf(entry);
    if (this.findExplicit(list, data, key) >= 0 || this.findGenerated(list, data, key) !== null) {
      throw new SandboxError(`list '${listKey}' already has an entry '${key}'`);
    }
    data.entries.push(structuredClone(entry));
  }

  removeEntry(listKey: string, entryKey: string, selector?: VariantSelector): void {
    const { list } = this.state(listKey);
    const data = this.variant(listKey, selector);
    const at = this.findExplicit(list, data, entryKey);
    if (at >= 0) {
      data.entries.splice(at, 1);
      return;
    }
    const index = this.findGenerated(list, data, entryKey);
    if (index === null || !data.generated) throw new SandboxError(`list '${listKey}' has no entry '${entryKey}'`);
    const removed = data.generated.removed;
    removed.splice(countAtMost(removed, index), 0, index);
    data.generated.patches.delete(index);
  }

  modifyEntry(listKey: string, entryKey: string, patch: Entry, selector?: VariantSelector): void {
    const { list } = this.state(listKey);
    if (!patch || typeof patch !== 'object' || Array.isArray(patch)) throw new SandboxError('patch must be an object');
    const data = this.variant(listKey, selector);
    const at = this.findExplicit(list, data, entryKey);
    if (at >= 0) {
      data.entries[at] = { ...data.entries[at], ...structuredClone(patch) };
      return;
    }
    const index = this.findGenerated(list, data, entryKey);
    if (index === null || !data.generated) throw new SandboxError(`list '${listKey}' has no entry '${entryKey}'`);
    data.generated.patches.set(index, { ...data.generated.patches.get(index), ...structuredClone(patch) });
  }

  setEntries(listKey: string, entries: Entry[], selector?: VariantSelector): void {
    if (!Array.isArray(entries)) throw new SandboxError('entries must be an array');
    const data = this.variant(listKey, selector, true);
    data.entries = structuredClone(entries);
    data.generated = null;
  }

  renameField(listKey: string, from: string, to: string): void {
    this.drift(listKey, { op: 'rename', from, to });
  }

  removeField(listKey: string, field: string): void {
    this.drift(listKey, { op: 'remove', field });
  }

  retypeField(listKey: string, field: string): void {
    this.drift(listKey, { op: 'retype', field });
  }

  /** A new field on every entry of every variant, with one value (e.g. a new boolean flag). */
  addField(listKey: string, field: string, value: unknown): void {
    this.drift(listKey, { op: 'add', field, value });
  }

  /** Schema drift on every variant of a list: stored entries change now; generated ones as produced. */
  private drift(listKey: string, drift: Drift): void {
    for (const data of this.state(listKey).variants.values()) {
      data.entries = data.entries.map((e) => applyDrift(e, drift));
      data.generated?.drift.push(drift);
    }
  }

  /** Replaces every variant of the list with `count` generated entries. */
  setGenerated(listKey: string, count: number): void {
    if (!Number.isInteger(count) || count < 0) throw new SandboxError('count must be a non-negative integer');
    for (const data of this.state(listKey).variants.values()) {
      data.entries = [];
      data.generated = { count, everyNth: [], removed: [], patches: new Map(), drift: [] };
    }
  }

  /** Changes the description of every Nth generated entry (indices N-1, 2N-1, ...). */
  changeGenerated(listKey: string, everyNth: number): void {
    if (!Number.isInteger(everyNth) || everyNth < 1) throw new SandboxError('everyNth must be a positive integer');
    let any = false;
    for (const data of this.state(listKey).variants.values()) {
      if (data.generated) {
        data.generated.everyNth.push(everyNth);
        any = true;
      }
    }
    if (!any) throw new SandboxError(`list '${listKey}' is not generated (setGenerated first)`);
  }

  generatedView(): Record<string, { count: number; everyNth: number[] }> {
    const out: Record<string, { count: number; everyNth: number[] }> = {};
    for (const [key, state] of this.lists) {
      for (const data of state.variants.values()) {
        if (data.generated) out[key] = { count: data.generated.count, everyNth: [...data.generated.everyNth] };
      }
    }
    return out;
  }

  pagingView(): Record<string, PagingConfig> {
    return Object.fromEntries([...this.lists].map(([key, s]) => [key, { ...s.paging }]));
  }

  countsView(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [key, state] of this.lists) {
      for (const variant of state.variants.keys()) {
        const sel = state.list.variants === 'version' ? { version: variant } : { carrier: variant };
        out[variant ? `${key}:${variant}` : key] = this.size(key, sel);
      }
    }
    return out;
  }

  private findExplicit(list: SandboxList, data: VariantData, key: string): number {
    return data.entries.findIndex((e) => list.keyOf(e) === key);
  }

  private findGenerated(list: SandboxList, data: VariantData, key: string): number | null {
    const gen = data.generated;
    if (!gen) return null;
    const index = list.generatedIndex(key);
    if (index === null || index >= gen.count || this.isRemoved(gen, index)) return null;
    return index;
  }
}

export { getList };
