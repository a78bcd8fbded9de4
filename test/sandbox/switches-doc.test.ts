// docs/sandbox.md names every switch of the control API with its body and an example, and each
// example works: posted as written to a sandbox, in the page's order, it answers 200.
// A switch added to src/sandbox/control.ts fails here until the page has it.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';
import { controlMethodNames, dataChangingMethods } from '../../src/sandbox/control.ts';
import { sandboxAgent, useSandbox, type Sandbox } from '../helpers/sandbox.ts';

const page = readFileSync(fileURLToPath(new URL('../../docs/sandbox.md', import.meta.url)), 'utf8');
/** The switches table: switch, body, example body, what it does. */
const rows = [...page.matchAll(/^\| `(\w+)` \| (.+?) \| `(\{.*?\})` \| (.+) \|$/gm)].map((m) => ({ name: m[1]!, example: m[3]!, does: m[4]! }));

let sb: Sandbox;
beforeAll(async () => {
  sb = await useSandbox({ controlSecret: 'doc-secret' });
});

async function post(name: string, body: string): Promise<{ status: number; json: unknown }> {
  const res = await request(`${sb.url}/__sandbox/${name}`, {
    method: 'POST',
    headers: { 'x-sandbox-control': 'doc-secret', 'content-type': 'application/json' },
    body,
    dispatcher: sandboxAgent(sb),
  });
  return { status: res.statusCode, json: await res.body.json() };
}

describe('docs/sandbox.md: the switches', () => {
  it('lists every switch once, and marks the data switches (kept across restarts) as data', () => {
    expect(rows.map((r) => r.name).sort()).toEqual([...controlMethodNames].sort());
    for (const row of rows) expect(row.does.startsWith('*data*'), row.name).toBe(dataChangingMethods.has(row.name));
  });

  it('each example, posted as written from the top of the table down, answers ok', async () => {
    for (const { name, example } of rows) {
      const answer = await post(name, example);
      expect(answer, `${name}: ${JSON.stringify(answer.json)}`).toMatchObject({ status: 200, json: { ok: true } });
    }
  });
});
