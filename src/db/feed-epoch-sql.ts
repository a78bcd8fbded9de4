// The SQL of the change feed's epochs (src/db/feed-epoch.ts), by name (docs/architecture.md, "Where SQL lives").

/** Records a restore as a new feed epoch if there was one; the current epoch. */
export const followRestoreSql = 'select refdata.change_feed_follow_restore() as epoch';

/** The worker's schema check and the restore check in one statement (the function runs once, in FROM). */
export const appliedMigrationsFollowingRestore = 'select m.created_at from refdata.change_feed_follow_restore() as e, drizzle.__drizzle_migrations m';
