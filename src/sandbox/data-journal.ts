// The data changes made through the control API, one JSON line each (`{"method","body"}`), kept in
// the sandbox's folder and applied again at the next start. A restart then serves the lists as they
// were, so the next sync records no removals and reappearances that never happened upstream.
// `reset` empties it; `refsync sandbox --reset` starts from the bundled data. Faults, latency and
// token switches are not data: they last until the sandbox stops.
import { appendFileSync, chmodSync, existsSync, readFileSync, rmSync } from 'node:fs';

export interface DataChange {
  method: string;
  body: Record<string, unknown>;
}

export class DataJournal {
  readonly file: string;
  /** Whether this journal set the file's mode yet: an older file keeps whatever mode it was made with. */
  #private = false;

  constructor(file: string) {
    this.file = file;
  }

  /** The changes recorded so far, oldest first. */
  changes(): DataChange[] {
    if (!existsSync(this.file)) return [];
    return readFileSync(this.file, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as DataChange);
  }

  append(change: DataChange): void {
    appendFileSync(this.file, `${JSON.stringify(change)}\n`, { mode: 0o600 });
    if (!this.#private) chmodSync(this.file, 0o600);
    this.#private = true;
  }

  clear(): void {
    rmSync(this.file, { force: true });
  }
}
