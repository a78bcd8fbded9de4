import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const refsyncBin = fileURLToPath(new URL('../../bin/refsync.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The bytes as written, for checks the decoded text would hide. */
  stdoutBytes: Buffer;
  stderrBytes: Buffer;
}

/**
 * Runs `refsync ...` as a user would, in a child process. Asynchronous on purpose: a sandbox
 * serving from this test process must keep answering while the command runs.
 */
export function runCli(
  args: string[],
  options: { env?: Record<string, string | undefined>; cwd?: string; timeoutMs?: number; nodeArgs?: string[] } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries({ PATH: process.env.PATH, HOME: process.env.HOME, ...options.env })) if (v !== undefined) env[k] = v;
    const child = spawn(process.execPath, [...(options.nodeArgs ?? []), refsyncBin, ...args], {
      env,
      cwd: options.cwd ?? process.cwd(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => stdout.push(d));
    child.stderr.on('data', (d: Buffer) => stderr.push(d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const [stdoutBytes, stderrBytes] = [Buffer.concat(stdout), Buffer.concat(stderr)];
      resolve({ code, stdout: stdoutBytes.toString('utf8'), stderr: stderrBytes.toString('utf8'), stdoutBytes, stderrBytes });
    });
  });
}
