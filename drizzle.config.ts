import { defineConfig } from 'drizzle-kit';

// Migrations are generated from src/db/schema.ts and committed; views, comments and roles are
// custom migrations (`drizzle-kit generate --custom`) next to them.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/schema.ts',
  out: './migrations',
  schemaFilter: ['refdata'],
  dbCredentials: { url: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
});
