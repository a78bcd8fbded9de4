import { escapeControls } from '../util/control-chars.ts';

/**
 * Makes every write to the stream terminal-safe: control characters are shown escaped (see
 * escapeControls). Installed once on stdout and stderr when the CLI starts, so every command's
 * human output (and `--json`, whose JSON value stays the same) passes through it, whatever wrote it.
 */
export function guardTerminalOutput(stream: NodeJS.WriteStream): void {
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    const text = typeof chunk === 'string' ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk).toString('utf8') : chunk;
    return write(typeof text === 'string' ? escapeControls(text) : text, ...rest);
  }) as NodeJS.WriteStream['write'];
}
