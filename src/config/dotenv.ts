import { existsSync } from 'node:fs';

/** Reads ./.env into process.env without overriding variables already set (the environment wins). */
export function loadDotEnv(path = '.env'): void {
  if (existsSync(path)) process.loadEnvFile(path);
}
