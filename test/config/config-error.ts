import { expect } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.ts';

/** The one-line ConfigError that loading `env` must end with; fails the test when it loads. */
export function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as Error).message;
    expect(message.split('\n')).toHaveLength(1);
    return message;
  }
  throw new Error('expected a ConfigError');
}
