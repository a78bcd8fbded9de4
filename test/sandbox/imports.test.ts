import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The sandbox's modules import each other without a circle: its shared types and error class
// (types.ts) import nothing of the sandbox, so any module can use them.

const root = fileURLToPath(new URL('../../src/sandbox/', import.meta.url));
const files = readdirSync(root, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts'))
  .map((f) => resolve(root, f));
const importsOf = (file: string) =>
  [...readFileSync(file, 'utf8').matchAll(/^(?:import|export)\b[^;]*?from '(\.[^']+)'/gms)]
    .map((m) => resolve(dirname(file), m[1]!))
    .filter((p) => files.includes(p));

describe('sandbox imports', () => {
  it('types.ts imports nothing else of the sandbox', () => {
    expect(importsOf(join(root, 'types.ts'))).toEqual([]);
  });

  it('form no circle', () => {
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const path: string[] = [];
    const visit = (file: string) => {
      state.set(file, 'open');
      path.push(file);
      for (const next of importsOf(file)) {
        if (state.get(next) === 'open')
          circles.push(
            path
              .slice(path.indexOf(next))
              .map((p) => relative(root, p))
              .join(' -> '),
          );
        else if (!state.has(next)) visit(next);
      }
      path.pop();
      state.set(file, 'done');
    };
    for (const file of files) if (!state.has(file)) visit(file);
    expect(circles).toEqual([]);
  });
});
