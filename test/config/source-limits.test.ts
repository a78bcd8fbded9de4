// The deadlines and list limits: defaults, the environment, a source of
// REFSYNC_CONFIG of its own, and one-line errors naming the setting.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.ts';
import { configError } from './config-error.ts';
import { testTempDir } from '../helpers/temp-dir.ts';

const dir = testTempDir('refsync-limits');
const base = { REFSYNC_BASE_URL: 'https://api.vendor.example', REFSYNC_EMAIL: 'machine@acme.example', REFSYNC_PASSWORD: 'pw-secret-1' };

describe('deadlines and list limits', () => {
  it('default to 600 s, 3600 s, 32 MiB per entry, 10,000,000 entries and 4 GiB per list', () => {
    expect(loadConfig(base).sources[0]).toMatchObject({
      requestDeadlineS: 600,
      targetDeadlineS: 3600,
      maxEntryBytes: 32 * 2 ** 20,
      maxListEntries: 10_000_000,
      maxListBytes: 4 * 2 ** 30,
    });
  });

  it('come from the environment, and per source from REFSYNC_CONFIG over it', () => {
    const env = { ...base, REFSYNC_REQUEST_DEADLINE_S: '30', REFSYNC_TARGET_DEADLINE_S: '0.5', REFSYNC_MAX_LIST_ENTRIES: '2000000' };
    expect(loadConfig(env).sources[0]).toMatchObject({ requestDeadlineS: 30, targetDeadlineS: 0.5, maxListEntries: 2_000_000 });
    const path = join(dir, 'sources.json');
    writeFileSync(
      path,
      JSON.stringify({
        sources: [
          { name: 'a', environment: 'a', apiKey: 'key-a', targetDeadlineS: 120, maxListBytes: 10_000_000 },
          { name: 'b', environment: 'b', apiKey: 'key-b' },
        ],
      }),
    );
    const [a, b] = loadConfig({ ...env, REFSYNC_CONFIG: path }).sources;
    expect(a).toMatchObject({ requestDeadlineS: 30, targetDeadlineS: 120, maxListBytes: 10_000_000, maxListEntries: 2_000_000 });
    expect(b).toMatchObject({ requestDeadlineS: 30, targetDeadlineS: 0.5, maxListBytes: 4 * 2 ** 30 });
  });

  it('refuses a value that is not a positive number, naming the setting', () => {
    expect(configError({ ...base, REFSYNC_REQUEST_DEADLINE_S: 'soon' })).toMatch(/^REFSYNC_REQUEST_DEADLINE_S: 'soon' — /);
    expect(configError({ ...base, REFSYNC_TARGET_DEADLINE_S: '0' })).toMatch(/^REFSYNC_TARGET_DEADLINE_S: '0' — .*above 0/);
    expect(configError({ ...base, REFSYNC_MAX_ENTRY_BYTES: '1.5' })).toMatch(/^REFSYNC_MAX_ENTRY_BYTES: '1.5' — .*whole number/);
    const path = join(dir, 'bad.json');
    writeFileSync(path, JSON.stringify({ sources: [{ name: 'a', environment: 'a', apiKey: 'key-a', maxListEntries: -3 }] }));
    expect(configError({ ...base, REFSYNC_CONFIG: path })).toMatch(/^REFSYNC_CONFIG sources\[0\] \(a\)\.maxListEntries: /);
  });
});
