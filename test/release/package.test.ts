// What a release is: package.json's version has its CHANGELOG section, the npm package holds what
// runs refsync and nothing private, and the image is labelled from package.json.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { imageBuildArgs } from '../../scripts/docker-build.ts';

const run = promisify(execFile);
const root = new URL('../../', import.meta.url).pathname;
const read = (path: string) => readFileSync(`${root}${path}`, 'utf8');
const pkg = JSON.parse(read('package.json')) as { version: string; license: string; files: string[] };

describe('CHANGELOG.md', () => {
  it("has a section for package.json's version, with a date, in Keep a Changelog form", () => {
    const changelog = read('CHANGELOG.md');
    const escaped = pkg.version.replace(/\./g, '\\.');
    expect(changelog).toMatch(new RegExp(`^## \\[${escaped}\\] - \\d{4}-\\d{2}-\\d{2}$`, 'm'));
    expect(changelog).toMatch(/^## \[Unreleased\]$/m);
    // Every release heading is a semver version, newest first.
    const versions = [...changelog.matchAll(/^## \[(\d+)\.(\d+)\.(\d+)\] - /gm)].map((m) => [Number(m[1]), Number(m[2]), Number(m[3])]);
    const sorted = [...versions].sort((a, b) => b[0]! - a[0]! || b[1]! - a[1]! || b[2]! - a[2]!);
    expect(versions).toEqual(sorted);
    for (const heading of changelog.matchAll(/^### (.+)$/gm)) expect(['Added', 'Changed', 'Deprecated', 'Removed', 'Fixed', 'Security']).toContain(heading[1]);
  });
});

describe('the npm package', () => {
  it('holds bin/, src/, migrations/, README, CHANGELOG and LICENSE; no tests, .env, certificates or bench data', async () => {
    const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: root,
      env: { ...process.env, npm_config_loglevel: 'silent' },
    });
    const files = (JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path);
    for (const path of ['bin/refsync.js', 'src/cli/main.ts', 'migrations/meta/_journal.json', 'README.md', 'CHANGELOG.md', 'LICENSE', 'package.json']) {
      expect(files, path).toContain(path);
    }
    const forbidden = files.filter(
      (f) =>
        /^(test|bench|\.ci|\.refsync|deploy|docs|scripts)\//.test(f) || /(^|\/)\.env/.test(f) || /\.(pem|key|crt|p12|pfx)$/.test(f) || /\.test\.ts$/.test(f),
    );
    expect(forbidden).toEqual([]);
  }, 60_000);

  it('is licensed Apache-2.0, with the licence text beside it', () => {
    expect(pkg.license).toBe('Apache-2.0');
    const license = read('LICENSE');
    expect(license).toMatch(/^\s+Apache License\n\s+Version 2\.0, January 2004\n/);
    expect(license).toContain('END OF TERMS AND CONDITIONS');
  });
});

describe('the image', () => {
  it("carries the OCI labels version, source and licence, from package.json's values as build arguments", () => {
    const dockerfile = read('Dockerfile');
    const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    for (const [label, arg] of [
      ['org.opencontainers.image.version', 'REFSYNC_VERSION'],
      ['org.opencontainers.image.licenses', 'REFSYNC_LICENSE'],
      ['org.opencontainers.image.source', 'REFSYNC_SOURCE'],
    ]) {
      expect(finalStage, label).toMatch(new RegExp(`^ARG ${arg}$`, 'm'));
      expect(finalStage, label).toContain(`${label}="\${${arg}}"`);
    }
    const args = imageBuildArgs({ ...pkg, repository: { url: 'git+https://example.test/refsync.git' } }, {}, () => undefined);
    expect(args).toEqual({ REFSYNC_VERSION: pkg.version, REFSYNC_LICENSE: 'Apache-2.0', REFSYNC_SOURCE: 'https://example.test/refsync.git' });
    expect(imageBuildArgs(pkg, { REFSYNC_SOURCE: 'https://example.test/s' }, () => '/work/a-local-clone').REFSYNC_SOURCE).toBe('https://example.test/s');
    expect(() => imageBuildArgs(pkg, {}, () => '/work/a-local-clone')).toThrow(/set REFSYNC_SOURCE/);
  });
});
