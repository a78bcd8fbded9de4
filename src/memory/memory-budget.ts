/** What the budget did, in order: for the worker's log and the tests that read it. */
export interface BudgetEvent {
  kind: 'admitted' | 'waiting' | 'released';
  /** The list and variant the reservation is for. */
  label: string;
  bytes: number;
  /** Bytes reserved by every holder after the event. */
  reserved: number;
}

/** One large list's share of the budget, held until the list is written (or has failed). */
export interface Reservation {
  readonly bytes: number;
  release(): void;
}

interface Waiter {
  bytes: number;
  label: string;
  admit: (reservation: Reservation) => void;
}

/**
 * A worker's memory, shared out among the large lists in flight (small lists take none of it, so
 * they never wait). A list is admitted when its bytes fit beside those already admitted, or when
 * nothing is admitted at all (a list larger than the whole budget runs alone rather than never).
 * Lists that do not fit wait in the order they asked; a waiting list holds nothing, so a list
 * admitted is never held up by one waiting, and waiting cannot deadlock.
 */
export class MemoryBudget {
  /** The worker's whole budget (src/memory/memory-limit.ts). */
  readonly total: number;
  /** What large lists may hold at once: the total less the worker's own share. */
  readonly forLargeLists: number;
  readonly #onEvent: (event: BudgetEvent) => void;
  #reserved = 0;
  #holders = 0;
  readonly #waiters: Waiter[] = [];

  constructor(total: number, workerShare: number, onEvent: (event: BudgetEvent) => void = () => undefined) {
    this.total = total;
    this.forLargeLists = Math.max(0, total - workerShare);
    this.#onEvent = onEvent;
  }

  /** Bytes reserved now, by every admitted list. */
  get reserved(): number {
    return this.#reserved;
  }

  /** Lists waiting for a share. */
  get waiting(): number {
    return this.#waiters.length;
  }

  /** A share at once if it fits and no list asked before; undefined otherwise (nothing is queued). */
  tryReserve(bytes: number, label: string): Reservation | undefined {
    if (this.#waiters.length > 0 || !this.#fits(bytes)) return undefined;
    return this.#admit(bytes, label);
  }

  /** A share, once it fits and every list that asked before has had its own; stops waiting on abort. */
  reserve(bytes: number, label: string, signal?: AbortSignal): Promise<Reservation> {
    const now = this.tryReserve(bytes, label);
    if (now) return Promise.resolve(now);
    signal?.throwIfAborted();
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { bytes, label, admit: resolve };
      this.#waiters.push(waiter);
      this.#onEvent({ kind: 'waiting', label, bytes, reserved: this.#reserved });
      signal?.addEventListener(
        'abort',
        () => {
          const at = this.#waiters.indexOf(waiter);
          if (at < 0) return;
          this.#waiters.splice(at, 1);
          reject(signal.reason);
          // The next in line may fit now that this one no longer stands before it.
          this.#admitWaiters();
        },
        { once: true },
      );
    });
  }

  #fits(bytes: number): boolean {
    return this.#holders === 0 || this.#reserved + bytes <= this.forLargeLists;
  }

  #admit(bytes: number, label: string): Reservation {
    this.#reserved += bytes;
    this.#holders += 1;
    this.#onEvent({ kind: 'admitted', label, bytes, reserved: this.#reserved });
    let held = true;
    return {
      bytes,
      release: () => {
        if (!held) return;
        held = false;
        this.#reserved -= bytes;
        this.#holders -= 1;
        this.#onEvent({ kind: 'released', label, bytes, reserved: this.#reserved });
        this.#admitWaiters();
      },
    };
  }

  /** Admits waiters in the order they came, for as long as the first one fits. */
  #admitWaiters(): void {
    while (this.#waiters.length > 0 && this.#fits(this.#waiters[0]!.bytes)) {
      const next = this.#waiters.shift()!;
      next.admit(this.#admit(next.bytes, next.label));
    }
  }
}
