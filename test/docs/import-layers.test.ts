// The imports of src/ have no circle, between files or between top-level folders, and the folders
// import only from the layers docs/architecture.md draws below them. An import that loads a module
// counts (`import ... from`, `export ... from`, `import './x.ts'`, `import('./x.ts')`); an
// `import type` or `export type`, or one whose every name is a `type`, is erased before Node runs
// the file and does not.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot as root, sourceFiles } from '../helpers/source-files.ts';

/** The relative modules a file loads when it runs. */
function valueImports(text: string): string[] {
  const specifiers: string[] = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\s+(type\s+)?([^'";]*?)\s*from\s*'(\.[^']+)'/gm)) {
    if (m[1]) continue;
    const names = /^\{([\s\S]*)\}$/.exec(m[2]!.trim())?.[1];
    const listed =
      names
        ?.split(',')
        .map((n) => n.trim())
        .filter(Boolean) ?? [];
    if (listed.length > 0 && listed.every((n) => n.startsWith('type '))) continue;
    specifiers.push(m[3]!);
  }
  for (const m of text.matchAll(/^\s*import\s+'(\.[^']+)'/gm)) specifiers.push(m[1]!);
  for (const m of text.matchAll(/\bimport\(\s*'(\.[^']+)'\s*\)/g)) specifiers.push(m[1]!);
  return specifiers;
}

/** Each node's edges, and the first circle found (as a path back to its start), or undefined. */
function findCycle(graph: ReadonlyMap<string, readonly string[]>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (node: string): string[] | undefined => {
    if (state.get(node) === 'done') return undefined;
    if (state.get(node) === 'open') return [...path.slice(path.indexOf(node)), node];
    state.set(node, 'open');
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(node, 'done');
    return undefined;
  };
  for (const node of [...graph.keys()].sort()) {
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return undefined;
}

const files = sourceFiles('src');
const fileGraph = new Map(
  files.map((file) => [file, valueImports(readFileSync(join(root, file), 'utf8')).map((s) => relative(root, join(root, dirname(file), s)))]),
);
const folderOf = (file: string): string => file.split('/')[1]!;
/** Folder to folder, with the file import that makes each edge. */
const folderEdges = new Map<string, string>();
for (const [file, targets] of fileGraph) {
  for (const target of targets) {
    const edge = `${folderOf(file)} -> ${folderOf(target)}`;
    if (folderOf(file) !== folderOf(target) && !folderEdges.has(edge)) folderEdges.set(edge, `${file} -> ${target}`);
  }
}
const folderGraph = new Map<string, string[]>();
for (const edge of folderEdges.keys()) {
  const [from, to] = edge.split(' -> ') as [string, string];
  folderGraph.set(from, [...(folderGraph.get(from) ?? []), to]);
}

/** The layers as docs/architecture.md draws them, top first: the folders of each line. */
function drawnLayers(): string[][] {
  const doc = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
  const block = /^## Layers\n[\s\S]*?^```\n([\s\S]*?)^```/m.exec(doc)?.[1] ?? '';
  return block
    .split('\n')
    .map((line) => line.split('  —')[0]!.trim())
    .filter(Boolean)
    .map((line) => line.split(/\s+/).map((f) => f.replace(/^src\/|\/$/g, '')));
}

describe('imports of src/', () => {
  it('reads value imports and leaves type-only ones out', () => {
    const text = [
      "import { a } from './a.ts';",
      "import type { B } from './b.ts';",
      "import { type C, type D } from './c.ts';",
      "import { e, type E } from './e.ts';",
      "export type { F } from './f.ts';",
      "export { g } from './g.ts';",
      "import {\n  h,\n  i,\n} from './h.ts';",
      "const j = await import('./j.ts');",
    ].join('\n');
    expect(valueImports(text)).toEqual(['./a.ts', './e.ts', './g.ts', './h.ts', './j.ts']);
    expect(
      findCycle(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', ['a']],
        ]),
      ),
    ).toEqual(['a', 'b', 'c', 'a']);
    expect(
      findCycle(
        new Map([
          ['a', ['b']],
          ['b', []],
        ]),
      ),
    ).toBeUndefined();
  });

  it('finds the files and their imports', () => {
    expect(files.length).toBeGreaterThan(200);
    expect([...fileGraph.values()].flat().length).toBeGreaterThan(500);
  });

  it('has no circle among files', () => {
    expect(findCycle(fileGraph)?.join(' -> ')).toBeUndefined();
  });

  it('has no circle between the top-level folders', () => {
    const cycle = findCycle(folderGraph);
    const why = cycle?.slice(1).map((to, i) => folderEdges.get(`${cycle[i]} -> ${to}`));
    expect(cycle ? `${cycle.join(' -> ')}: ${why!.join('; ')}` : undefined).toBeUndefined();
  });

  it('imports only from the layers docs/architecture.md draws below each folder', () => {
    const layers = drawnLayers();
    const level = new Map(layers.flatMap((folders, i) => folders.map((f) => [f, i] as const)));
    const folders = readdirSync(join(root, 'src'), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
    expect([...level.keys()].sort()).toEqual(folders);
    const upward = [...folderEdges]
      .filter(([edge]) => {
        const [from, to] = edge.split(' -> ') as [string, string];
        return level.get(to)! <= level.get(from)!;
      })
      .map(([edge, file]) => `${edge} (${file})`);
    expect(upward).toEqual([]);
  });
});
