// The read model's SQL on the changes: `refsync changes`, the change feed, its consumers and what
// holds it back, by name (docs/architecture.md, "Where SQL lives").

/** When a list (and variant) was first synced. */
export const listFirstSynced = `select min(first_synced_at) as at from refdata.list_sync_times
     where list_key = $1 and ($2::text is null or variant = $2) and ($3::text is null or environment = $3)`;

/** A named consumer's saved position in the change feed. */
export const consumerPosition = 'select position from refdata.change_feed_consumers where name = $1';

/** Saves a named consumer's position in the change feed. */
export const saveConsumerPosition = `insert into refdata.change_feed_consumers (name, position, updated_at) values ($1, $2, now())
     on conflict (name) do update set position = excluded.position, updated_at = excluded.updated_at`;

/** Whether this login may save consumer positions. */
export const mayWriteConsumers = `select has_table_privilege('refdata.change_feed_consumers', 'INSERT')
            and has_table_privilege('refdata.change_feed_consumers', 'UPDATE') as ok, current_user as role`;

/** The transactions holding the change feed back, oldest first. */
export const feedHeldBy = 'select held_seconds, pid, application_name, state, xact_start as since from refdata.change_feed_held()';

/** One page of the change feed after a position. */
export const changeFeedPage = 'select * from refdata.change_feed($1::text, $2::integer)';

/** The position at the end of the change feed now. */
export const feedEndPosition = `select refdata.change_feed_position(txid, id) as position from refdata.entry_changes
     where txid < pg_snapshot_xmin(pg_current_snapshot()) order by txid desc, id desc limit 1`;

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
