import type { TestProject } from 'vitest/node';
import pg from 'pg';
import { openDatabase } from '../src/db/database.ts';
import { migrateDatabase } from '../src/columns/migrate-views.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseServerUrl: string;
    templateDatabase: string;
    redisUrl: string;
  }
}

type Stop = () => Promise<unknown>;
const stops: Stop[] = [];

async function postgresUrl(): Promise<string> {
  if (process.env.DATABASE_URL) {
    console.log(`[tests] Postgres: DATABASE_URL (${new URL(process.env.DATABASE_URL).host})`);
    return process.env.DATABASE_URL;
  }
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const container = await new PostgreSqlContainer('postgres:17-alpine').start();
  stops.push(() => container.stop());
  console.log('[tests] Postgres: started with testcontainers (postgres:17-alpine)');
  return container.getConnectionUri();
}

async function redisUrl(): Promise<string> {
  if (process.env.REDIS_URL) {
    console.log(`[tests] Redis: REDIS_URL (${new URL(process.env.REDIS_URL).host})`);
    return process.env.REDIS_URL;
  }
  const { RedisContainer } = await import('@testcontainers/redis');
  const container = await new RedisContainer('redis:7-alpine').withCommand(['redis-server', '--maxmemory-policy', 'noeviction']).start();
  stops.push(() => container.stop());
  console.log('[tests] Redis: started with testcontainers (redis:7-alpine)');
  return container.getConnectionUrl();
}

export function databaseUrlFor(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** One migrated template per test run; each test file copies it (CREATE DATABASE ... TEMPLATE). */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const serverUrl = await postgresUrl();
  const template = `refsync_template_${process.pid}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${template}`);
  await admin.query(`create database ${template}`);
  const db = await openDatabase({ url: databaseUrlFor(serverUrl, template), poolSize: 2 });
  await migrateDatabase(db);
  await db.close();

  project.provide('databaseServerUrl', serverUrl);
  project.provide('templateDatabase', template);
  project.provide('redisUrl', await redisUrl());

  return async () => {
    await admin.query(`drop database if exists ${template}`).catch(() => undefined);
    await admin.end();
    for (const stop of stops.reverse()) await stop();
  };
}
