// The read model's SQL on the changes: `refsync changes`, the change feed, its consumers and what
// holds it back, by name (docs/architecture.md, "Where SQL lives").

/** When a list (and variant) was first synced. */
export const listFirstSynced = `select min(first_synced_at) as at from refdata.list_sync_times
     where list_key = $1 and ($2::text is null or variant = $2) and ($3::text is null or environment = $3)`;

/** A named consumer's committed position and who holds its lease, if anyone (lease_live: not lapsed). */
export const consumerRow = `select position, lease_token, lease_holder, lease_until, lease_until > now() as lease_live
     from refdata.change_feed_consumers where name = $1`;

/**
 * Takes a consumer's lease ($3 token, $4 holder, for $5 seconds): creates the consumer at $2 when it is
 * new, else takes the lease only when none is held or it has lapsed. No row back: another holds it.
 */
export const claimConsumer = `insert into refdata.change_feed_consumers as c (name, position, lease_token, lease_holder, lease_until, updated_at)
     select $1, refdata.change_feed_after($2), $3, $4, now() + make_interval(secs => $5), now() where refdata.change_feed_check($2)
     on conflict (name) do update set lease_token = excluded.lease_token, lease_holder = excluded.lease_holder, lease_until = excluded.lease_until
       where c.lease_token is null or c.lease_until <= now() or c.lease_token = excluded.lease_token
     returning c.position`;

/** Renews a consumer's lease ($2 token) for $3 seconds; no row back: the lease was lost. */
export const renewConsumerLease = `update refdata.change_feed_consumers set lease_until = now() + make_interval(secs => $3)
     where name = $1 and lease_token = $2 returning lease_until`;

/** Gives a consumer's lease back ($2 token). */
export const releaseConsumerLease = `update refdata.change_feed_consumers set lease_token = null, lease_holder = null, lease_until = null
     where name = $1 and lease_token = $2`;

/**
 * Commits position $2 for consumer $1: only a position the feed could have returned (change_feed_check,
 * 22023), only forwards (one equal to the stored one is a no-op), and with $3 (a lease token) only
 * while that lease is held. A new name is created at $2. No row back: refused (behind, or lease lost).
 */
export const commitConsumerPosition = `insert into refdata.change_feed_consumers as c (name, position, updated_at)
     select $1, $2, now() where refdata.change_feed_check($2)
     on conflict (name) do update set position = excluded.position, updated_at = excluded.updated_at
       where (refdata.change_feed_epoch_of(excluded.position), refdata.change_feed_txid_of(excluded.position), refdata.change_feed_id_of(excluded.position))
             >= (refdata.change_feed_epoch_of(c.position), refdata.change_feed_txid_of(c.position), refdata.change_feed_id_of(c.position))
         and ($3::text is null or c.lease_token = $3)
     returning c.position`;

/** Whether this login may save consumer positions. */
export const mayWriteConsumers = `select has_table_privilege('refdata.change_feed_consumers', 'INSERT')
            and has_table_privilege('refdata.change_feed_consumers', 'UPDATE') as ok, current_user as role`;

/** The transactions holding the change feed back, oldest first. */
export const feedHoldbackBy = 'select held_seconds, pid, application_name, state, xact_start as since from refdata.change_feed_held()';

/** One page of the change feed after a position. */
export const changeFeedPage = 'select * from refdata.change_feed($1::text, $2::integer)';

/** The position at the end of the change feed now (null: no change yet). */
export const feedEndPosition = 'select refdata.change_feed_end() as position';

/** The recorded entry changes, newest first, for `refsync changes`. */
export const recordedChanges = `select id, detected_at, environment, list_key, variant, change, entry_key, code, changed_fields, impact,
            coalesce(after ->> 'description', before ->> 'description', after ->> 'name', before ->> 'name') as description,
            before, after
     from refdata.entry_changes
     where ($1::text[] is null or list_key = any($1))
       and ($2::timestamptz is null or detected_at >= $2)
       and ($3::text is null or environment = $3)
     order by detected_at desc, id desc
     limit $4`;
