/**
 * Calls `stop` on the first SIGINT or SIGTERM, so a long-running command can finish the line in
 * progress and close cleanly (exit 0). Each handler is taken once: a second Ctrl-C finds Node's own
 * default and ends the process at once, for a stop that would otherwise wait on a hung server.
 * Returns the function that removes the handlers.
 */
export function onStopSignal(stop: () => void): () => void {
  const signals = ['SIGINT', 'SIGTERM'] as const;
  for (const signal of signals) process.once(signal, stop);
  return () => {
    for (const signal of signals) process.off(signal, stop);
  };
}
