// Lists every function, method and arrow in src/ whose body spans more than 60 lines, and whether
// the comment right above it says why ("long because"). Exits 1 while an unexplained one exists.
// Run: node scripts/long-functions.ts   (npm run lint:functions)
//
// It parses with the `typescript` package (the project's own compiler, so the syntax it accepts is
// the syntax the project compiles) rather than counting braces, which strings and regexps fool.
import { readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { SyntaxKind, type Node, type SourceFile } from 'typescript/unstable/ast';
import { API } from 'typescript/unstable/sync';

const MAX_BODY_LINES = 60;
const REASON = /long because/i;

const root = resolve(import.meta.dirname, '..');

const functionKinds = new Set([
  SyntaxKind.FunctionDeclaration,
  SyntaxKind.FunctionExpression,
  SyntaxKind.ArrowFunction,
  SyntaxKind.MethodDeclaration,
  SyntaxKind.Constructor,
  SyntaxKind.GetAccessor,
  SyntaxKind.SetAccessor,
]);

interface LongFunction {
  file: string;
  line: number;
  name: string;
  bodyLines: number;
  explained: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

type Named = Node & { name?: Node & { text?: string } };

/**
 * The node a reader sees as the function's declaration: an arrow or function expression assigned
 * to a variable or property is introduced by that statement, and its comment sits above it.
 */
function anchorOf(fn: Node): Node {
  let node: Node = fn;
  for (;;) {
    const parent = node.parent;
    if (!parent) return node;
    const wraps =
      parent.kind === SyntaxKind.VariableDeclaration ||
      parent.kind === SyntaxKind.VariableDeclarationList ||
      parent.kind === SyntaxKind.VariableStatement ||
      parent.kind === SyntaxKind.PropertyAssignment ||
      parent.kind === SyntaxKind.PropertyDeclaration ||
      parent.kind === SyntaxKind.ExportAssignment;
    if (!wraps) return node;
    node = parent;
  }
}

function nameOf(fn: Node, sf: SourceFile): string {
  const own = (fn as Named).name?.text;
  if (own) return own;
  if (fn.kind === SyntaxKind.Constructor) return 'constructor';
  const parent = fn.parent as (Named & { expression?: Node }) | undefined;
  const assigned = parent?.name?.text;
  if (assigned) return assigned;
  if (parent?.kind === SyntaxKind.CallExpression && parent.expression) {
    return `(callback of ${sf.text.slice(parent.expression.getStart(sf), parent.expression.end)})`;
  }
  return '(anonymous)';
}

/** The comment lines directly above `line` (0-based), stopping at the first blank or code line. */
function commentAbove(lines: string[], line: number): string {
  const block: string[] = [];
  for (let i = line - 1; i >= 0; i--) {
    const text = lines[i]!.trim();
    if (!/^(\/\/|\/\*|\*)/.test(text)) break;
    block.unshift(text);
  }
  return block.join(' ');
}

function longFunctionsIn(sf: SourceFile, file: string): LongFunction[] {
  const lines = sf.text.split('\n');
  const found: LongFunction[] = [];
  const lineOf = (pos: number) => sf.getLineAndCharacterOfPosition(pos).line;
  const visit = (node: Node): void => {
    const body = (node as Node & { body?: Node }).body;
    if (functionKinds.has(node.kind) && body) {
      const bodyLines = lineOf(body.end) - lineOf(body.getStart(sf)) + 1;
      if (bodyLines > MAX_BODY_LINES) {
        const anchorLine = lineOf(anchorOf(node).getStart(sf));
        found.push({
          file,
          line: lineOf(node.getStart(sf)) + 1,
          name: nameOf(node, sf),
          bodyLines,
          explained: REASON.test(commentAbove(lines, anchorLine)),
        });
      }
    }
    node.forEachChild(visit);
  };
  sf.forEachChild(visit);
  return found;
}

const api = new API({ cwd: root });
let found: LongFunction[];
try {
  const project = api.updateSnapshot({ openProjects: [join(root, 'tsconfig.json')] }).getProjects()[0];
  if (!project) throw new Error('tsconfig.json did not open as a project');
  found = sourceFiles(join(root, 'src')).flatMap((path) => {
    const sf = project.program.getSourceFile(path);
    if (!sf) throw new Error(`${relative(root, path)} is not part of the tsconfig.json program`);
    return longFunctionsIn(sf, relative(root, path));
  });
} finally {
  api.close();
}

for (const f of found) {
  console.log(`${f.file}:${f.line}  ${f.name}  ${f.bodyLines} lines  ${f.explained ? 'explained' : 'UNEXPLAINED'}`);
}
const unexplained = found.filter((f) => !f.explained).length;
console.log(`${found.length} functions over ${MAX_BODY_LINES} lines in src/, ${unexplained} without a "long because" comment`);
process.exitCode = unexplained > 0 ? 1 : 0;
