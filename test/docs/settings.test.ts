// The settings reference cannot drift from the code: docs/configuration.md and .env.example are what
// scripts/settings-docs.ts makes of src/config/settings-reference.ts, every variable the source reads
// is in that table, and each default the table states behaves as leaving the variable unset.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.ts';
import { settingNames, settings } from '../../src/config/settings-reference.ts';
import { configurationPath, configurationWithSettings, envExample, envExamplePath } from '../../scripts/settings-docs.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const regenerate = 'out of date: run `node scripts/settings-docs.ts`';
const base = { REFSYNC_BASE_URL: 'https://api.vendor.example', REFSYNC_EMAIL: 'machine@acme.example', REFSYNC_PASSWORD: 'pw-secret-1' };

/** Every environment variable name the source reads: `env.NAME`, `env['NAME']` or a quoted setting name. */
function namesReadBySource(): Set<string> {
  const read = new Set<string>();
  const srcDir = join(root, 'src');
  for (const path of readdirSync(srcDir, { recursive: true, encoding: 'utf8' })) {
    if (!path.endsWith('.ts') || path.endsWith('settings-reference.ts')) continue;
    const text = readFileSync(join(srcDir, path), 'utf8');
    for (const [, name] of text.matchAll(/\benv\.((?:REFSYNC|REDIS|DATABASE|LOG|OTEL)_[A-Z0-9_]*[A-Z0-9])\b/g)) read.add(name!);
    for (const [name] of text.matchAll(/\bREFSYNC_[A-Z0-9_]*[A-Z0-9]\b/g)) read.add(name);
  }
  return read;
}

describe('the settings reference', () => {
  it('docs/configuration.md holds the generated tables', () => {
    const current = readFileSync(configurationPath, 'utf8');
    expect(current, `docs/configuration.md ${regenerate}`).toBe(configurationWithSettings(current));
  });

  it('.env.example is the generated one', () => {
    expect(readFileSync(envExamplePath, 'utf8'), `.env.example ${regenerate}`).toBe(envExample());
  });

  it('names every variable the source reads, each once', () => {
    const names = settingNames();
    expect(new Set(names).size).toBe(names.length);
    const missing = [...namesReadBySource()].filter((name) => !names.includes(name));
    expect(missing, 'add these to src/config/settings-reference.ts').toEqual([]);
  });

  it.each(settings.filter((s) => s.unsetEquals !== undefined).map((s) => [s.name, s.unsetEquals!]))(
    '%s set to its documented default (%s) behaves as unset',
    (name, value) => {
      expect(loadConfig({ ...base, [name]: value })).toEqual(loadConfig(base));
    },
  );

  it('a default other than the code one is caught (the old REFSYNC_ALERT_ON of the docs)', () => {
    expect(loadConfig({ ...base, REFSYNC_ALERT_ON: 'added,held,failed' })).not.toEqual(loadConfig(base));
  });

  it('the contract names every setting, and leaves meanings and defaults to configuration.md', () => {
    const contract = readFileSync(join(root, 'docs/contract.md'), 'utf8');
    const section = contract.slice(contract.indexOf('### Settings'), contract.indexOf('### Lists and targets'));
    for (const s of settings) expect(section, s.name).toContain(`\`${s.name}\``);
    expect(section).toContain('](configuration.md)');
    expect(section).not.toContain('| default |');
  });
});
