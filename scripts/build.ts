// Compiles src/ into dist/: the JavaScript the npm package and the image run (Node refuses to strip
// types under node_modules, where an installed package lives). TypeScript's own compiler, file for
// file (tsconfig.build.json), and the files src/ reads at run time beside the modules that read
// them. Built in a fresh folder and swapped in whole, so a failed or concurrent build never leaves
// a half-written dist/ behind. Run: npm run build (npm pack and npm publish run it as prepack).
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');

/** Files under src/ that modules read at run time (the status page's stylesheet and icon). */
export function runtimeAssets(dir = join(root, 'src')): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && !entry.name.endsWith('.ts'))
    .map((entry) => relative(join(root, 'src'), join(entry.parentPath, entry.name)));
}

export function build(outDir = join(root, 'dist')): void {
  const staging = mkdtempSync(join(dirname(outDir), '.dist-'));
  try {
    const tsc = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', staging], {
      stdio: 'inherit',
    });
    if (tsc.status !== 0) throw new Error(`build: tsc -p tsconfig.build.json failed (exit ${tsc.status ?? tsc.signal})`);
    for (const asset of runtimeAssets()) cpSync(join(root, 'src', asset), join(staging, asset));
    rmSync(outDir, { recursive: true, force: true });
    renameSync(staging, outDir);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  try {
    build();
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exitCode = 1;
  }
}
