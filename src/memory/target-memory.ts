import { listVariant, type Target } from '../catalog/catalog.ts';
import { knownLarge, type LargeListTuning, type ListMemory } from './list-memory.ts';
import type { MemoryBudget, Reservation } from './memory-budget.ts';
import { listBytes, type ListSizes } from './list-sizes.ts';

/** The worker's whole memory: the budget shared by large lists, and the sizes that tell which are large. */
export interface WorkerMemory {
  budget: MemoryBudget;
  sizes: ListSizes;
}

/**
 * One target job's part of the worker's memory budget. A list large at its last sync asks for its
 * share before the fetch (beforeFetch), so it waits holding neither a request nor a connection; any
 * other list asks only if its fetch proves it large (syncTarget, through ListMemory).
 */
export class TargetMemory implements ListMemory {
  readonly #memory: WorkerMemory;
  readonly #target: Target;
  readonly #label: string;
  readonly #lastEntries: number | undefined;
  #reservation: Reservation | undefined;

  constructor(memory: WorkerMemory, target: Target) {
    this.#memory = memory;
    this.#target = target;
    this.#label = `${target.source.name}/${listVariant(target)}`;
    this.#lastEntries = memory.sizes.entriesOf(target);
  }

  get admitted(): boolean {
    return this.#reservation !== undefined;
  }

  /** Waits for the share of a list that was large at its last sync (knownLarge). */
  async beforeFetch(tuning: LargeListTuning, signal?: AbortSignal): Promise<void> {
    if (!knownLarge(this.#lastEntries, tuning)) return;
    this.#reservation = await this.#memory.budget.reserve(listBytes(this.#lastEntries), this.#label, signal);
  }

  admitNow(): boolean {
    this.#reservation = this.#memory.budget.tryReserve(listBytes(this.#lastEntries), this.#label);
    return this.admitted;
  }

  async wait(signal?: AbortSignal): Promise<void> {
    this.#reservation = await this.#memory.budget.reserve(listBytes(this.#lastEntries), this.#label, signal);
  }

  /** Gives the share back; entries, when the list synced, are what its next sync is judged by. */
  finish(entries?: number): void {
    this.#reservation?.release();
    this.#reservation = undefined;
    if (entries !== undefined) this.#memory.sizes.learn(this.#target, entries);
  }
}
