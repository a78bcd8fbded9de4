// The role data teams are granted (docs/data-teams.md). Creating it needs CREATEROLE, which the owner
// role of a managed Postgres often lacks; everything else refsync does needs only ownership of its
// schema. So an owner that may not create it migrates without it, and the grants it missed are given
// on the first `refsync migrate` after an administrator created it (docs/production.md, "Managed
// Postgres").
import type { Queryable } from './database.ts';

export const READER_ROLE = 'refdata_reader';

/** What an administrator runs once when the owner may not create roles. */
export const CREATE_READER_STATEMENT = `create role ${READER_ROLE} nologin`;

/** present: grant to it; creatable: the migrations create it; absent: this role may not create it. */
export type ReaderRoleState = 'present' | 'creatable' | 'absent';

export async function readerRoleState(q: Queryable): Promise<ReaderRoleState> {
  const { rows } = await q.query<{ present: boolean; creates: boolean }>(
    `select exists (select 1 from pg_roles where rolname = $1) as present,
            coalesce((select rolsuper or rolcreaterole from pg_roles where rolname = current_user), false) as creates`,
    [READER_ROLE],
  );
  const row = rows[0]!;
  if (row.present) return 'present';
  return row.creates ? 'creatable' : 'absent';
}

/**
 * A migration statement about the reader role: its creation, or a grant or revoke to it. Its SQL
 * comments do not count: a function whose comment mentions the role is not about it.
 */
export function namesReaderRole(statement: string): boolean {
  return new RegExp(`\\b${READER_ROLE}\\b`).test(statement.replace(/--[^\n]*/g, ''));
}

/**
 * Grants to the reader as one statement that does nothing while the role is missing: the views and
 * functions a sync generates (src/columns/) get their grants when it exists, and are still created
 * when it does not.
 */
export function whenReaderExists(grants: readonly string[]): string {
  return `DO $grant$ BEGIN IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${READER_ROLE}') THEN ${grants.map((g) => `${g};`).join(' ')} END IF; END $grant$`;
}

/** undefined_function, undefined_table: the object of an old grant was dropped by a later migration. */
const GONE = new Set(['42883', '42P01']);

/**
 * Gives the reader every grant the migrations give it, again, creating the role first when this role
 * may. Returns false, granting nothing, when the role is missing and this role may not create it.
 * `statements` are the migrations' statements that name the role (its creation left out), replayed
 * in order, each under a savepoint so that a grant on an object a later migration dropped is passed
 * over; then EXECUTE on each list's generated functions (the views are among ALL TABLES). A role
 * that already has USAGE on the schema (the first grant of the migrations) is left as it is, so an
 * ordinary migrate writes no catalog row. Grants and revokes are idempotent. In the caller's
 * transaction.
 */
export async function grantToReader(tx: Queryable, statements: readonly string[], generatedFunctions: readonly string[]): Promise<boolean> {
  const state = await readerRoleState(tx);
  if (state === 'absent') return false;
  // Granted already (the migrations did, or a migrate since the role was created): nothing to do.
  if (state === 'present' && (await tx.query<{ ok: boolean }>(`select has_schema_privilege($1, 'refdata', 'usage') as ok`, [READER_ROLE])).rows[0]?.ok)
    return true;
  if (state === 'creatable') await tx.query(CREATE_READER_STATEMENT);
  for (const statement of statements) {
    await tx.query('savepoint reader_grant');
    try {
      await tx.query(statement);
      await tx.query('release savepoint reader_grant');
    } catch (err) {
      if (!GONE.has((err as { code?: string }).code ?? '')) throw err;
      await tx.query('rollback to savepoint reader_grant');
    }
  }
  const { rows } = await tx.query<{ fn: string }>(
    `select p.oid::regprocedure::text as fn from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where n.nspname = 'refdata' and p.proname = any($1::text[])`,
    [generatedFunctions],
  );
  for (const { fn } of rows) await tx.query(`GRANT EXECUTE ON FUNCTION ${fn} TO ${READER_ROLE}`);
  return true;
}
