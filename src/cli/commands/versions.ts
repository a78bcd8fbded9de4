// `refsync versions diff A B`: how two kept charge-code versions differ, from the database only.
// It reads DATABASE_URL and nothing else of the configuration, so an analyst can run it without the
// upstream's address or credentials.
import { chargeCodeVersionDiff, chargeCodeVersionCounts, type VersionDiffRow } from '../../db/functions.ts';
import { parseCommandArgs, UsageError } from '../args.ts';
import { databaseUrlFromEnv, openCliDatabase } from '../database.ts';
import { formatTable } from '../output/table.ts';
import { jsonText, terminalText } from '../output/terminal.ts';

const usage = 'versions diff A B [--json] [--environment E]';

interface EnvironmentDiff {
  environment: string;
  counts: { removed: number; added: number; modified: number; unchanged: number };
  changes: VersionDiffRow[];
}

interface DiffReport {
  a: string;
  b: string;
  environments: EnvironmentDiff[];
  /** Environments that hold only one of the two versions: not compared. */
  skipped: Array<{ environment: string; has: string }>;
}

/** A version with no current charge codes where asked: the user named it wrong or never synced it. */
class UnknownVersionError extends Error {}

function printReport(report: DiffReport): void {
  const { a, b } = report;
  const out: string[] = [];
  for (const env of report.environments) {
    out.push(`charge codes, version ${a} → ${b}, environment ${env.environment}`, '');
    const onlyA = env.changes.filter((r) => r.change === 'removed');
    const onlyB = env.changes.filter((r) => r.change === 'added');
    const changed = env.changes.filter((r) => r.change === 'modified');
    if (onlyA.length) {
      out.push(
        `removed: only in ${a} (${onlyA.length}):`,
        formatTable(
          ['code', 'description'],
          onlyA.map((r) => [r.code, r.description_a]),
        ),
        '',
      );
    }
    if (onlyB.length) {
      out.push(
        `added: only in ${b} (${onlyB.length}):`,
        formatTable(
          ['code', 'description'],
          onlyB.map((r) => [r.code, r.description_b]),
        ),
        '',
      );
    }
    if (changed.length) {
      out.push(
        `modified (${changed.length}):`,
        formatTable(
          ['code', 'changed fields', `description in ${a}`, `description in ${b}`],
          changed.map((r) => [r.code, (r.changed_fields ?? []).join(', ') || null, r.description_a, r.description_b]),
        ),
        '',
      );
    }
    const c = env.counts;
    out.push(`${c.removed} removed (only in ${a}), ${c.added} added (only in ${b}), ${c.modified} modified, ${c.unchanged} unchanged`);
    out.push('');
  }
  for (const s of report.skipped) out.push(`not compared: environment ${s.environment} holds only version ${s.has}`);
  process.stdout.write(`${out.join('\n').trimEnd()}\n`);
}

async function diff(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs('versions', argv, true, 'versions diff');
  if (positionals.length !== 2) throw new UsageError(`versions diff: expected two versions, A and B (usage: refsync ${usage})`);
  const [a, b] = positionals as [string, string];
  const environment = values.environment;

  const db = await openCliDatabase({ databaseUrl: databaseUrlFromEnv(), readOnly: true });
  try {
    const counts = await chargeCodeVersionCounts(db, environment);
    const where = environment ? ` in environment ${environment}` : '';
    const known = [...new Set(counts.map((c) => c.version))].sort();
    if (environment && !known.length) {
      throw new UnknownVersionError(`versions diff: environment '${environment}' holds no charge codes`);
    }
    for (const version of [a, b]) {
      if (!known.includes(version)) {
        throw new UnknownVersionError(
          `versions diff: version '${version}' has no charge codes${where} (${known.length ? `versions present: ${known.join(', ')}` : 'no charge codes synced yet'})`,
        );
      }
    }
    const countOf = (env: string, version: string) => counts.find((c) => c.environment === env && c.version === version)?.count;
    const envs = [...new Set(counts.map((c) => c.environment))].sort();
    const compared = envs.filter((e) => countOf(e, a) !== undefined && countOf(e, b) !== undefined);
    if (!compared.length) {
      throw new UnknownVersionError(`versions diff: no environment${where} holds both ${a} and ${b}`);
    }
    const rows = await chargeCodeVersionDiff(db, a, b, environment);
    const report: DiffReport = {
      a,
      b,
      environments: compared.map((env) => {
        const changes = rows.filter((r) => r.environment === env);
        const n = (kind: VersionDiffRow['change']) => changes.filter((r) => r.change === kind).length;
        const removed = n('removed');
        const modified = n('modified');
        return {
          environment: env,
          counts: { removed, added: n('added'), modified, unchanged: countOf(env, a)! - removed - modified },
          changes,
        };
      }),
      skipped: envs
        .filter((e) => !compared.includes(e) && (countOf(e, a) !== undefined || countOf(e, b) !== undefined))
        .map((e) => ({ environment: e, has: countOf(e, a) !== undefined ? a : b })),
    };
    if (values.json) process.stdout.write(`${jsonText(report)}\n`);
    else printReport(report);
    return 0;
  } catch (err) {
    if (!(err instanceof UnknownVersionError)) throw err;
    process.stderr.write(`refsync: ${terminalText(err.message)}\n`);
    return 2;
  } finally {
    await db.close();
  }
}

/**
 * An unknown version exits 2 like any bad argument: the command was asked about something that is
 * not there, and scripts can tell that from a database failure (exit 1).
 */
export async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'diff') return diff(rest);
  throw new UsageError(
    sub ? `versions: unknown subcommand '${sub}' (usage: refsync ${usage})` : `versions: a subcommand is required (usage: refsync ${usage})`,
  );
}
