// A real terminal for tests: a tmux server of the test's own (its own socket in a temporary folder,
// killed and removed afterwards)
// running one command in a pane of a given size. The test reads the screen as a person sees it
// (capture-pane) and, when it asks, the raw bytes the command wrote to the terminal (pipe-pane).
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { refsyncBin } from './cli.ts';

const run = promisify(execFile);

/** A shell word holding `value` exactly. */
const quote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;

export interface PaneOptions {
  columns: number;
  rows?: number;
  env: Record<string, string>;
  /** Shell text after the command (e.g. `>out 2>err` to take the terminal away from it). */
  redirect?: string;
  /** Record the raw bytes written to the terminal (read with `raw()`). */
  recordRaw?: boolean;
  /** The folder the command runs in (default: the test's own). */
  cwd?: string;
}

export interface Pane {
  /** The screen (and the scrollback above it), one string per screen line; `joined` joins lines the terminal wrapped. */
  screen(options?: { joined?: boolean }): Promise<string[]>;
  /** A format of tmux's about the pane, e.g. `#{pane_title}`. */
  show(format: string): Promise<string>;
  /** Types `text` as a person at the keyboard would, then Enter. */
  type(text: string): Promise<void>;
  /** Resolves with the command's exit status once it has ended. */
  exited(timeoutMs?: number): Promise<number>;
  /** The bytes the command wrote to the terminal (with recordRaw). */
  raw(): Buffer;
  /** A file in the pane's own folder. */
  file(name: string): string;
  close(): Promise<void>;
}

/**
 * Runs `refsync args...` in a fresh tmux pane of `columns` x `rows`, with exactly `env` (plus PATH,
 * HOME and the TERM tmux gives it). A line `pane ready` is printed first, so a test can tell that a
 * screen was not cleared. The command starts only once recording is in place.
 */
export async function refsyncInPane(args: string[], options: PaneOptions): Promise<Pane> {
  const dir = mkdtempSync(join(tmpdir(), 'refsync-tmux-'));
  // The server reads no user configuration: only this, so the screen is tmux's default one.
  writeFileSync(join(dir, 'tmux.conf'), 'set -g history-limit 5000\nset -g status off\n');
  // The server's socket lives in the pane's folder: removed with it, and no other tmux is touched.
  const tmux = (...a: string[]) => run('tmux', ['-S', join(dir, 'tmux.sock'), '-f', join(dir, 'tmux.conf'), ...a]).then((r) => r.stdout);
  const vars = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...options.env };
  const script = [
    '#!/bin/sh',
    `while [ ! -e ${quote(join(dir, 'go'))} ]; do sleep 0.05; done`,
    'echo pane ready',
    ...(options.cwd ? [`cd ${quote(options.cwd)}`] : []),
    `env -i TERM="$TERM" ${Object.entries(vars)
      .map(([k, v]) => `${k}=${quote(v)}`)
      .join(' ')} ${quote(process.execPath)} ${quote(refsyncBin)} ${args.map(quote).join(' ')} ${options.redirect ?? ''}`,
    `echo $? > ${quote(join(dir, 'status'))}`,
    // The pane stays open, so its last screen can be read after the command ended.
    'exec sleep 600',
  ].join('\n');
  writeFileSync(join(dir, 'run.sh'), script, { mode: 0o755 });
  await tmux('new-session', '-d', '-s', 'test', '-x', String(options.columns), '-y', String(options.rows ?? 50), `sh ${quote(join(dir, 'run.sh'))}`);
  if (options.recordRaw) await tmux('pipe-pane', '-O', '-t', 'test', `cat > ${quote(join(dir, 'raw'))}`);
  writeFileSync(join(dir, 'go'), '');
  return {
    async screen({ joined = false } = {}) {
      const text = await tmux('capture-pane', '-p', '-t', 'test', '-S', '-', '-E', '-', ...(joined ? ['-J'] : []));
      const lines = text.split('\n');
      while (lines.length && lines.at(-1)!.trim() === '') lines.pop();
      return lines;
    },
    async type(text) {
      // tmux reads an argument ending in `;` as the end of its command: `\;` is the semicolon itself.
      await tmux('send-keys', '-t', 'test', '-l', text.endsWith(';') ? `${text.slice(0, -1)}\\;` : text);
      await tmux('send-keys', '-t', 'test', 'Enter');
    },
    show: async (format) => (await tmux('display-message', '-p', '-t', 'test', format)).trimEnd(),
    async exited(timeoutMs = 90_000) {
      const status = join(dir, 'status');
      for (const until = Date.now() + timeoutMs; Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
        if (existsSync(status) && readFileSync(status, 'utf8').endsWith('\n')) return Number(readFileSync(status, 'utf8'));
      }
      throw new Error(`refsync ${args.join(' ')} did not end within ${timeoutMs} ms`);
    },
    raw: () => (existsSync(join(dir, 'raw')) ? readFileSync(join(dir, 'raw')) : Buffer.alloc(0)),
    file: (name) => join(dir, name),
    async close() {
      await tmux('kill-server').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
