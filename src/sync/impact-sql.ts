// The SQL of the impact recorded on each sync (impact.ts), by name.

/** Records why a snapshot's impact was not computed. */
export const setImpactError = 'update refdata.snapshots set impact_error = $2 where id = $1';

/** Writes the impact computed for each change of a snapshot. */
export const setChangesImpact = `update refdata.entry_changes c set impact = i.impact
     from jsonb_to_recordset($2::jsonb) as i(entry_key text, impact jsonb)
     where c.snapshot_id = $1 and c.entry_key = i.entry_key`;

/** The removed and modified codes of a diff. */
export const changedCodesOf = (diff: string): string =>
  `select entry_key, old_code as code, change from ${diff}
     where change in ('removed', 'modified') and old_code is not null order by entry_key`;
