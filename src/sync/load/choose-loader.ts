import type { Target } from '../../catalog/targets.ts';
import type { LazyConnection } from '../../db/lazy-connection.ts';
import type { ApplyOptions } from './apply-types.ts';
import type { CollectedList } from '../collect/collect.ts';
import { FirstLoadAlone } from './first-load-alone.ts';
import { StreamedFirstLoad } from './large/streamed-first-load.ts';
import { StreamedResync } from './large/streamed-resync.ts';
import type { Loader, LoadResult } from './loader.ts';
import { Resync } from './resync.ts';
import type { RowsCheck } from './rows-check.ts';
import type { RowWriteRule } from './row-write-rule.ts';
import type { ApplyBatch } from '../batch/apply-batch.ts';
import { TargetTransaction } from '../target/target-transaction.ts';

/** What choosing a loader needs: the fetch's connection and index check, and how rows are written. */
export interface LoaderSetup {
  conn: LazyConnection;
  target: Target;
  check: RowsCheck;
  rule: RowWriteRule;
  /**
   * Whether a load may hold a transaction from its first spill to its end (a first load, or a
   * resync streamed with its index): only where each connection is a session of its own (on PGlite
   * every other statement would run inside it), and not when the list is fetched again after a
   * streamed load backed out.
   */
  streamAtSpill: boolean;
}

/*
 * A loader is chosen once per fetch, by whichever of these two comes first: the first spill of a
 * large list, or the end of a fetch that never spilled. Both ask the target's state under its lock
 * (target-state.ts#isFirstLoad is the only rule).
 */

/** At the first spill, while the fetch goes on. */
export async function loaderAtFirstSpill(setup: LoaderSetup): Promise<Loader> {
  // An index read in flight uses the same connection: let it end before a transaction begins there.
  await setup.check.readsEnded();
  if (setup.streamAtSpill) {
    const txn = await TargetTransaction.tryBegin(setup.conn, setup.target);
    if (txn?.state.firstLoad) {
      setup.check.off();
      return StreamedFirstLoad.open(txn, setup.rule);
    }
    const index = setup.check.current;
    const streamed = txn && index && (await StreamedResync.open(txn, index));
    if (streamed) return streamed;
    // Another sync holds the target right now, or the index is missing or stale: stage, and diff once it is free.
    await txn?.rollback();
  }
  return new Resync(setup.conn, setup.target, setup.check, setup.rule);
}

/**
 * A fetch that needed no load (taken by its batch: set aside, or recorded unchanged in one statement) and its result;
 * the loader, which writes nothing, is the one an apply would have had, for the load's log line to name.
 */
export function withoutLoad(setup: LoaderSetup, result: LoadResult): { loader: Loader; result: LoadResult } {
  return { loader: new Resync(setup.conn, setup.target, setup.check, setup.rule), result };
}

/** What names the loader of a first load gathered for its run: it writes nothing itself. */
function gatheredFirstLoad(collected: CollectedList): Loader {
  return {
    kind: 'first-load',
    rowsWritten: collected.entryCount,
    append: async () => undefined,
    finish: async () => ({ setAside: true, firstLoad: true }),
    abort: async () => undefined,
  };
}

/**
 * After a fetch that never spilled: its batch (apply-batch.ts; a run's, or the batch of one of a list
 * synced on its own) takes it, set aside as unchanged, gathered as a first load, or recorded unchanged at
 * once; any other is loaded by the loader chosen under the lock in the transaction that then loads.
 * Should another sync have made a list the batch did not take unchanged since, the transaction's
 * apply records it so.
 */
export async function loadAfterFetch(
  setup: LoaderSetup,
  batch: ApplyBatch,
  collected: CollectedList,
  options: ApplyOptions,
): Promise<{ loader: Loader; result: LoadResult }> {
  const taken = await batch.take(setup.conn, setup.target, collected, options);
  if (taken && 'firstLoad' in taken) return { loader: gatheredFirstLoad(collected), result: taken };
  if (taken) return withoutLoad(setup, taken);
  return setup.conn.transaction(async (tx, opened, atCommit) => {
    const txn = await TargetTransaction.within(tx, setup.target, opened, atCommit);
    const loader = txn.state.firstLoad ? new FirstLoadAlone(txn, setup.rule) : new Resync(setup.conn, setup.target, setup.check, setup.rule, txn);
    return { loader, result: await loader.finish(collected, options) };
  }, TargetTransaction.opening(setup.target));
}
