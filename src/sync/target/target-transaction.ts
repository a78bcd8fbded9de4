import type { Target } from '../../catalog/catalog.ts';
import type { Connection, Queryable } from '../../db/database.ts';
import { tryLockTarget } from './target-lock.ts';
import { lockThenLastSnapshots, stateReadOf } from '../sql.ts';
import { completeTargetState, readTargetState, type TargetState } from './target-state.ts';

/**
 * The transaction a load writes in, holding the target's advisory lock, with the target's state as
 * it read after taking the lock. It comes two ways:
 * - `within` a transaction someone else ends (`conn.transaction(fn)`): commit and rollback are left
 *   to them. Every load that begins after the fetch takes this way (PGlite runs such a transaction
 *   exclusively, which a bare BEGIN on its one session would not).
 * - `tryBegin`, a transaction of its own held open through the rest of a fetch (a first load that
 *   streams into the entries): only tried, so a fetch never waits behind another sync's apply.
 */
export class TargetTransaction {
  readonly q: Queryable;
  readonly target: Target;
  readonly state: TargetState;
  readonly #ends: boolean;
  /** Where atCommit() puts a statement: the owning transaction's COMMIT message (`within`), or #closing. */
  readonly #closeWith: (statement: string) => void;
  /** The statements this transaction's own commit() sends in the COMMIT's message (`tryBegin`). */
  readonly #closing: string[] = [];
  #open = true;

  private constructor(q: Queryable, target: Target, state: TargetState, closeWith?: (statement: string) => void) {
    this.q = q;
    this.target = target;
    this.state = state;
    this.#ends = !closeWith;
    this.#closeWith = closeWith ?? ((statement) => this.#closing.push(statement));
  }

  /**
   * The statement a transaction `within` opens with: the target's lock (waited for) and then its
   * state, in the BEGIN's round trip (Connection#transaction's `opening`). It writes nothing: an
   * unchanged fetch is recorded by the apply (resync-apply.ts), through the one writer of snapshots.
   */
  static opening(target: Target): string {
    return lockThenLastSnapshots(target);
  }

  /**
   * The target inside `tx`, opened with `opening(target)`, whose rows are `opened`; `atCommit` is the
   * transaction's own (Connection#transaction), which its owner sends with the COMMIT.
   */
  static async within(
    tx: Queryable,
    target: Target,
    opened: Array<Record<string, unknown>>,
    atCommit: (statement: string) => void,
  ): Promise<TargetTransaction> {
    const row = opened[0];
    if (!row) throw new Error(`${target.list.key}: the transaction was not opened with TargetTransaction.opening`);
    return new TargetTransaction(tx, target, await completeTargetState(tx, target, stateReadOf(row)), atCommit);
  }

  /** Begins a transaction on `conn` and takes the target's lock if it is free; undefined (nothing open) if it is not. */
  static async tryBegin(conn: Connection, target: Target): Promise<TargetTransaction | undefined> {
    await conn.begin();
    try {
      if (!(await tryLockTarget(conn, target.source.environment, target.list.key, target.variant))) {
        await conn.query('rollback');
        return undefined;
      }
      return new TargetTransaction(conn, target, await readTargetState(conn, target));
    } catch (err) {
      await conn.query('rollback').catch(() => undefined);
      throw err;
    }
  }

  /**
   * A statement to run just before the COMMIT, in its message (one round trip): a NOTIFY, which
   * Postgres sends only once the transaction commits anyway.
   */
  atCommit(statement: string): void {
    this.#closeWith(statement);
  }

  /** Commits a transaction of its own (`tryBegin`), with the statements given atCommit before it. */
  async commit(): Promise<void> {
    if (!this.#ends || !this.#open) return;
    this.#open = false;
    try {
      await this.q.script([...this.#closing, 'commit']);
    } catch (err) {
      // A failed statement of the message skips the COMMIT: the transaction is left aborted, not ended.
      await this.q.query('rollback').catch(() => undefined);
      throw err;
    }
  }

  /** Idempotent; a transaction `within` another's is rolled back by throwing out of it instead. */
  async rollback(): Promise<void> {
    if (!this.#ends || !this.#open) return;
    this.#open = false;
    await this.q.query('rollback');
  }
}
