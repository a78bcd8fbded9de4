// What a release is: package.json's version has its CHANGELOG section, the package is licensed, and
// the image is labelled from package.json.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { imageBuildArgs } from '../../scripts/docker-build.ts';

const root = new URL('../../', import.meta.url).pathname;
const read = (path: string) => readFileSync(`${root}${path}`, 'utf8');
const pkg = JSON.parse(read('package.json')) as { version: string; license: string; files: string[] };

describe('CHANGELOG.md', () => {
  it("has a section for package.json's version (dated once released, else the Unreleased one), in Keep a Changelog form", () => {
    const changelog = read('CHANGELOG.md');
    const escaped = pkg.version.replace(/\./g, '\\.');
    expect(changelog).toMatch(/^## \[Unreleased\]$/m);
    // Every release heading is a semver version, newest first.
    const versions = [...changelog.matchAll(/^## \[(\d+)\.(\d+)\.(\d+)\] - /gm)].map((m) => [Number(m[1]), Number(m[2]), Number(m[3])]);
    const sorted = [...versions].sort((a, b) => b[0]! - a[0]! || b[1]! - a[1]! || b[2]! - a[2]!);
    expect(versions).toEqual(sorted);
    // A version ahead of every dated release is the one being prepared: its changes are under
    // Unreleased, which the release dates and renames.
    const [major, minor, patch] = pkg.version.split('.').map(Number) as [number, number, number];
    const newest = versions[0]!;
    const ahead = major - newest[0]! || minor - newest[1]! || patch - newest[2]!;
    if (ahead > 0)
      expect(changelog.slice(changelog.indexOf('## [Unreleased]'), changelog.indexOf('\n## [', changelog.indexOf('## [Unreleased]') + 1))).toMatch(/^- /m);
    else expect(changelog).toMatch(new RegExp(`^## \\[${escaped}\\] - \\d{4}-\\d{2}-\\d{2}$`, 'm'));
    for (const heading of changelog.matchAll(/^### (.+)$/gm)) expect(['Added', 'Changed', 'Deprecated', 'Removed', 'Fixed', 'Security']).toContain(heading[1]);
  });
});

// What the packed tarball holds, and that it runs where it is installed: install.test.ts.
describe('the npm package', () => {
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
