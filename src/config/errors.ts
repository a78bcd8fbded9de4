// ConfigError is declared in src/util/config-error.ts, below util's logger, which throws it for a bad
// LOG_LEVEL; configuration's modules keep importing it from here.
export { ConfigError } from '../util/config-error.ts';
