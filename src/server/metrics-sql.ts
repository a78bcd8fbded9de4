// The SQL behind the worker's gauges, by name.

/** How many alerts wait in the outbox. */
export const pendingAlertCount = "select count(*)::int as n from refdata.alerts where state = 'pending'";

/** Each target's last ok snapshot's time and size. */
export const lastOkSnapshots = `select environment, list_key, variant, extract(epoch from fetched_at)::float8 as at, entry_count
         from refdata.target_last_ok`;
