// `refsync export-dbt [--out FILE]`: the dbt sources.yml of schema refdata. It needs no database and
// no configuration: the descriptions are the ones the migrations put on the relations (a test holds
// them to the live schema), so the file can be generated anywhere, e.g. in the dbt project's CI.
import { writeFileSync } from 'node:fs';
import { dbtSourcesYaml } from '../dbt/sources.ts';
import { parseCommandArgs } from './args.ts';

export async function run(argv: string[]): Promise<number> {
  const { values } = parseCommandArgs('export-dbt', argv);
  const text = dbtSourcesYaml();
  if (!values.out) {
    process.stdout.write(text);
    return 0;
  }
  writeFileSync(values.out, text);
  process.stdout.write(`wrote ${values.out}\n`);
  return 0;
}
