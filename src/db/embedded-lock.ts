// One process at a time on an embedded (PGlite) data folder. PGlite is a library: two processes that
// open the same folder each run their own Postgres over the same files, and the second one's writes
// (or the first's) are lost, the catalog damaged. So a command holds a lock from before PGlite opens
// the folder until after it is closed, and a second command waits for it (or is refused).
//
// Node has no flock, so the lock is a listening Unix socket, which the kernel frees when its owner
// dies (a crashed or killed command never blocks the next one). On Linux it lives in the abstract
// namespace, named after the folder's real path: nothing on disk to clean up (it is per network
// namespace: two containers sharing one folder do not see each other's lock, so give each its own
// folder). Elsewhere it is a socket file in the temporary folder, treated as stale (and replaced)
// when nobody answers on it.
// The owner writes its pid and command beside the socket's name, so a waiter can say whom it waits
// for: a file, since a owner busy in a long statement (PGlite runs on the main thread) answers no
// socket until it ends.
import { createHash } from 'node:crypto';
import { readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

/** Who holds a folder's lock, as its owner answers. */
export interface LockOwner {
  pid: number;
  command: string;
}

export interface EmbeddedLockOptions {
  /** How long to wait for the owner before refusing; undefined waits as long as it takes, 0 refuses at once. */
  waitMs?: number | undefined;
  /** Told once, after `noticeAfterMs` of waiting, whom this command waits for. Default: a line on stderr. */
  notice?: (text: string) => void;
  noticeAfterMs?: number;
  /** The socket's kind: the abstract namespace (Linux only) or a file. Default: abstract on Linux. */
  abstract?: boolean;
}

export interface EmbeddedLock {
  release(): Promise<void>;
}

/** Another process holds the embedded database, and this one waited as long as it was told to. */
export class EmbeddedDatabaseBusyError extends Error {
  readonly code = 'embedded_database_busy';
}

/** How often a waiter tries the lock again. */
const RETRY_MS = 100;

/** This process's command as a person typed it: `refsync sync`. */
function commandLine(): string {
  const script = basename(process.argv[1] ?? '');
  if (/refsync/.test(script)) return ['refsync', ...process.argv.slice(2, 3)].join(' ');
  return script || 'node';
}

/**
 * The socket's address for a data folder, one name per real path whatever relative path or link led
 * there, and the file naming its owner.
 */
export function lockAddress(dataDir: string, abstract: boolean): { address: string; ownerFile: string } {
  const hash = createHash('sha256').update(realpathSync(dataDir)).digest('hex');
  const inTmp = join(tmpdir(), `refsync-pglite-${hash.slice(0, 32)}`);
  return { address: abstract ? `\0refsync-pglite-${hash}` : `${inTmp}.sock`, ownerFile: `${inTmp}.owner` };
}

/** The owner the file names, while that process lives (the file of an earlier owner may still be there). */
function readOwner(file: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(file, 'utf8')) as LockOwner;
    if (!Number.isInteger(owner.pid) || typeof owner.command !== 'string') return undefined;
    process.kill(owner.pid, 0);
    return { pid: owner.pid, command: owner.command.slice(0, 200) };
  } catch {
    return undefined;
  }
}

/** Listens on address; false when another process holds it. */
function listen(server: Server, address: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      if (err.code === 'EADDRINUSE') resolve(false);
      else reject(err);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve(true);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(address);
  });
}

/** Whether nobody listens on a socket file any more (its owner died and left it): connect() is refused. */
function isStale(address: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(address);
    socket.on('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED' || err.code === 'ENOENT'));
  });
}

function describeOwner(owner: LockOwner | undefined): string {
  return owner ? `pid ${owner.pid} (${owner.command})` : 'another process';
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Takes the lock of an embedded data folder (which must exist), waiting for the process that holds
 * it. Throws an EmbeddedDatabaseBusyError naming the owner when the wait runs out (`waitMs`).
 */
export async function lockEmbeddedDatabase(dataDir: string, options: EmbeddedLockOptions = {}): Promise<EmbeddedLock> {
  const abstract = options.abstract ?? process.platform === 'linux';
  const { address, ownerFile } = lockAddress(dataDir, abstract);
  const me: LockOwner = { pid: process.pid, command: commandLine() };
  const notice = options.notice ?? ((text: string) => process.stderr.write(`refsync: ${text}\n`));
  const started = Date.now();
  let told = false;
  for (;;) {
    const server = createServer((socket) => socket.destroy());
    // The lock must not keep a process alive that forgot to close its database.
    server.unref();
    if (await listen(server, address)) {
      try {
        writeFileSync(ownerFile, JSON.stringify(me), { mode: 0o600 });
      } catch {
        // Naming the owner is a courtesy: a waiter without it says "another process".
      }
      return {
        // The owner file goes first, while the lock is still held: once the socket closes, the next
        // owner may already have written its own.
        release: () => {
          rmSync(ownerFile, { force: true });
          return new Promise<void>((resolve) => server.close(() => resolve()));
        },
      };
    }
    // Only a socket file outlives its owner; nobody answers on it, so it is removed and taken.
    if (!abstract && (await isStale(address))) {
      rmSync(address, { force: true });
      continue;
    }
    const owner = readOwner(ownerFile);
    const waited = Date.now() - started;
    if (options.waitMs !== undefined && waited >= options.waitMs) {
      throw new EmbeddedDatabaseBusyError(
        `the embedded database ${dataDir} is in use by ${describeOwner(owner)}: one process at a time may open it; run this again when that one ends`,
      );
    }
    if (!told && waited >= (options.noticeAfterMs ?? 1_000)) {
      told = true;
      notice(`waiting for the embedded database ${dataDir}, held by ${describeOwner(owner)}`);
    }
    await sleep(RETRY_MS);
  }
}
