export { loadConfig } from './load.ts';
export { ConfigError } from './errors.ts';
export type * from './types.ts';
