/** Bad configuration: the message names the setting and what is wrong, on one line, without its value when secret. */
export class ConfigError extends Error {
  readonly code = 'config';
}
