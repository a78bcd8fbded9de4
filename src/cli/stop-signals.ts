/** Where bin/refsync.js keeps a SIGINT or SIGTERM that came while `refsync changes` was still loading. */
const EARLY = Symbol.for('refsync.earlyStop');

interface EarlyStop {
  signal: NodeJS.Signals | null;
  handler: (signal: NodeJS.Signals) => void;
}

/**
 * Calls `stop` with the first SIGINT or SIGTERM, so a long-running command (`refsync changes
 * --follow`, `sandbox`, `worker`) can finish what is in progress and close cleanly; at once when one
 * already came while the command was loading (bin/refsync.js holds them for `changes`). Called before
 * the command prints how to stop it: a signal sent as soon as that line is read finds the handler.
 * The first signal takes the handler off both: a second one, Ctrl-C again or a SIGTERM from a
 * supervisor, finds Node's own default and ends the process at once, for a stop that would
 * otherwise wait on a hung server. Returns the function that removes the handler.
 */
export function onStopSignal(stop: (signal: NodeJS.Signals) => void): () => void {
  const signals = ['SIGINT', 'SIGTERM'] as const;
  const remove = () => {
    for (const signal of signals) process.off(signal, first);
  };
  function first(signal: NodeJS.Signals): void {
    remove();
    stop(signal);
  }
  for (const signal of signals) process.on(signal, first);
  const early = (globalThis as { [EARLY]?: EarlyStop })[EARLY];
  if (early) {
    for (const signal of signals) process.off(signal, early.handler);
    delete (globalThis as { [EARLY]?: EarlyStop })[EARLY];
    if (early.signal) first(early.signal);
  }
  return remove;
}

/** The first SIGINT or SIGTERM from now on (onStopSignal), for a command that only waits for it. */
export function nextStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => onStopSignal(resolve));
}
