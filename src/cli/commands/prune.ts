// `refsync prune [--dry-run] [--json]`: applies the retention settings now, as the worker does every
// hour. It reads DATABASE_URL and REFSYNC_RETAIN_*_DAYS only, so it runs without the upstream's settings.
import { retentionFromEnv } from '../../config/retention.ts';
import { prune } from '../../retention/prune.ts';
import { parseCommandArgs } from '../args.ts';
import { databaseUrlFromEnv, openCliDatabase } from '../database.ts';
import { jsonText } from '../output/terminal.ts';

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs('prune', argv);
  const retention = retentionFromEnv(process.env);
  const db = await openCliDatabase({ databaseUrl: databaseUrlFromEnv(), readOnly: values['dry-run'] });
  try {
    const counts = await prune(db, retention, { dryRun: values['dry-run'] });
    if (values.json) {
      process.stdout.write(`${jsonText({ dry_run: values['dry-run'], retention_days: retention, ...counts }, undefined)}\n`);
      return 0;
    }
    const kept = (days: number) => (days === 0 ? 'kept forever' : `older than ${days} days`);
    const verb = values['dry-run'] ? 'would delete' : 'deleted';
    process.stdout.write(
      [
        `${verb} ${counts.snapshots} unchanged snapshots (${kept(retention.snapshotsDays)})`,
        `${verb} ${counts.alerts} delivered or skipped alerts (${kept(retention.alertsDays)})`,
        `${verb} ${counts.runs} finished runs (${kept(retention.runsDays)})`,
        '',
      ].join('\n'),
    );
    return 0;
  } finally {
    await db.close();
  }
}
