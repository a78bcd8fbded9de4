// `refsync changes --consumer NAME --exec CMD`: each batch of lines is piped to a run of CMD, and its
// last position committed only when CMD exits 0 (docs/change-feed.md, "Consumers"). CMD's exit 0 is its
// word that it processed every line it was given; a CMD that stops reading before the end (its stdin
// closed early), fails or is killed commits nothing, and the batch is read again next time.
import { spawn } from 'node:child_process';

export type BatchOutcome = { ok: true } | { ok: false; why: string };

/** Runs `command` with a shell, `lines` on its stdin (one per line), its stdout and stderr this process's own. */
export function runBatch(command: string, lines: readonly string[], env: NodeJS.ProcessEnv): Promise<BatchOutcome> {
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', command], { stdio: ['pipe', 'inherit', 'inherit'], env });
    let unread = false;
    child.stdin.on('error', () => {
      unread = true;
    });
    child.on('error', (err) => resolve({ ok: false, why: `could not be started (${err.message})` }));
    child.on('close', (code, signal) => {
      if (signal) resolve({ ok: false, why: `was ended by ${signal}` });
      else if (code !== 0) resolve({ ok: false, why: `exited with status ${code}` });
      else if (unread) resolve({ ok: false, why: 'exited 0 before reading every line of its batch' });
      else resolve({ ok: true });
    });
    child.stdin.end(lines.length ? `${lines.join('\n')}\n` : '');
  });
}
