// One benchmark run as data: `npm run bench -- --save` writes it as one JSON file under
// bench/results/, and scripts/render-bench-results.ts renders the newest into docs/performance.md.
// A run's figures are kept whole (value, baseline, ratio, target) with the machine and the commit,
// so a page never has to carry a run's history in prose.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { met, type Figure, type MachineInfo } from './lib.ts';

export const resultsDir = resolve(import.meta.dirname, 'results');

/** A figure as recorded: a converted run may know only the ratio, so value and baseline can be null. */
export interface RecordedFigure {
  name: string;
  value: number | null;
  unit: string;
  baselineName: string;
  baseline: number | null;
  ratio: number;
  target?: Figure['target'];
  met?: boolean;
  notes?: string;
}

export interface RunRecord {
  /** When the run started, ISO 8601 in UTC. */
  date: string;
  /** The commit measured (`git rev-parse HEAD`), and whether the work tree had changes beside it. */
  commit: string | null;
  dirty: boolean;
  /** The benchmarks run (`p1`, ..., `p4-bad`). */
  benchmarks: string[];
  machine: MachineInfo;
  figures: RecordedFigure[];
  /** Set on a run written before `--save` existed: where its figures were copied from. */
  convertedFrom?: string;
}

function git(args: string[]): string | null {
  try {
    return execFileSync('git', args, { cwd: resolve(import.meta.dirname, '..'), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

export function recordedFigure(f: Figure): RecordedFigure {
  const r: RecordedFigure = { name: f.name, value: f.value, unit: f.unit, baselineName: f.baselineName, baseline: f.baseline, ratio: f.ratio };
  if (f.target) {
    r.target = f.target;
    r.met = met(f)!;
  }
  if (f.notes) r.notes = f.notes;
  return r;
}

export function runRecord(startedAt: Date, benchmarks: string[], machine: MachineInfo, figures: Figure[]): RunRecord {
  const status = git(['status', '--porcelain', '--untracked-files=no']);
  return {
    date: startedAt.toISOString(),
    commit: git(['rev-parse', 'HEAD']),
    dirty: status !== null && status !== '',
    benchmarks,
    machine,
    figures: figures.map(recordedFigure),
  };
}

/** `2026-11-29T05-25-00Z-69c1250.json`: sorted by name is sorted by date. */
export function recordFileName(record: RunRecord): string {
  const stamp = record.date.replace(/\.\d+Z$/, 'Z').replaceAll(':', '-');
  return `${stamp}-${(record.commit ?? 'nocommit').slice(0, 7)}.json`;
}

export function saveRunRecord(record: RunRecord, dir = resultsDir): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, recordFileName(record));
  writeFileSync(path, `${JSON.stringify(record, null, 2)}\n`);
  return path;
}

/** Every run recorded, oldest first. */
export function readRunRecords(dir = resultsDir): RunRecord[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as RunRecord);
}
