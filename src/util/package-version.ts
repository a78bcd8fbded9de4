import { readFileSync } from 'node:fs';

/** This refsync's release, from its package.json (`refsync --version`, the build-info gauge, the served digest). */
export const packageVersion: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
