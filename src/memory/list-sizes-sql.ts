// The memory budget's one read of the database, by name.

/** Each target's entry count at its last ok snapshot. */
export const lastListSizes = 'select environment, list_key, variant, entry_count from refdata.target_last_ok where entry_count is not null';
