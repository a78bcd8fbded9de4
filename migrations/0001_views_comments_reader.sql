-- Views over entries (one per list key), comments for data teams, and the read-only role.
COMMENT ON TABLE refdata.sync_runs IS 'One row per sync run: when it started and ended, what triggered it, and how it went.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.sync_runs.id IS 'Run id.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.sync_runs.environment IS 'Environment label of the source the run synced (sandbox, production, ...).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.sync_runs.trigger IS 'What started the run: schedule, manual (refsync trigger) or cli (refsync sync).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.sync_runs.status IS 'running, succeeded (every list synced), partial (some lists failed or were held) or failed.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.sync_runs.started_at IS 'When the run started (database clock).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.sync_runs.finished_at IS 'When the run ended; null while running.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.sync_runs.error IS 'Why the run failed or was partial, in one line.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.sync_runs.source IS 'Name of the configured source the run was for.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.sync_runs.slot IS 'Schedule slot or trigger id; one run record per slot.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.sync_runs.targets_total IS 'How many list variants the run covers.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.sync_runs.targets_done IS 'How many of them have finished (any outcome).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.sync_runs.targets_failed IS 'How many of them failed, were held or were unavailable.';
--> statement-breakpoint
COMMENT ON TABLE refdata.snapshots IS 'One row per fetch of one list variant: its outcome, content hash and what changed against the previous good fetch.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.snapshots.id IS 'Snapshot id.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.snapshots.run_id IS 'The sync run this fetch belonged to.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.snapshots.environment IS 'Environment label of the source.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.snapshots.list_key IS 'Which reference list (accessorials, charge_codes, ...).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.snapshots.variant IS ''''' for plain lists; the carrier for carrier_package_types; the version for charge_codes (a date or unpinned).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.snapshots.fetched_at IS 'When the fetch was recorded (database clock).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.snapshots.status IS 'ok (applied or unchanged), failed (the list could not be fetched or was invalid; data untouched), unavailable (the service does not offer it), held (would remove too much; not applied).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.snapshots.content_hash IS 'sha-256 hex of the canonical list; equal hashes mean identical lists.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.snapshots.entry_count IS 'Number of distinct entries fetched.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.snapshots.changed IS 'True when the list differs from the previous ok snapshot and was applied.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.snapshots.added IS 'Entries new in this snapshot.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.snapshots.removed IS 'Entries gone in this snapshot.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.snapshots.modified IS 'Entries whose content changed.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.snapshots.error IS 'Why the fetch failed or was held, in one line.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.snapshots.reappeared IS 'Entries that came back after having been removed.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.snapshots.error_code IS 'Machine-readable kind of failure (auth, tls, http_status, protocol, timeout, size, paging, network, duplicate_key, held).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.snapshots.fields IS 'Field names the entries carried, to detect schema changes.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.snapshots.pages IS 'Pages fetched.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.snapshots.duration_ms IS 'Time the fetch and apply took, in milliseconds.';
--> statement-breakpoint
COMMENT ON TABLE refdata.entries IS 'Full history of every entry (slowly changing dimension, type 2): one row per version of an entry, valid from valid_from until valid_to.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.entries.id IS 'Row id.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.entries.environment IS 'Environment label of the source.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.entries.list_key IS 'Which reference list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.entries.variant IS ''''' for plain lists; carrier or charge-code version otherwise.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.entries.entry_key IS 'The entry''s identity within its list (its code; item|sub for NMFC; machine_readable for equipment types).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.entries.code IS 'The entry''s code as other APIs reference it.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.entries.description IS 'Human-readable description of the entry.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.entries.payload IS 'The whole entry exactly as the service served it, unknown fields included.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.entries.entry_hash IS 'sha-256 (base64) of the canonical entry, for change detection.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.entries.valid_from IS 'When this version of the entry was first seen (database clock).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.entries.valid_to IS 'When this version stopped being current; null while it is current.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.entries.first_snapshot_id IS 'Snapshot that introduced this version.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.entries.last_snapshot_id IS 'Last snapshot known to contain this version; set when the version is closed (unchanged fetches do not touch rows).';
--> statement-breakpoint
COMMENT ON TABLE refdata.entry_changes IS 'Every detected change of an entry, newest last: added, removed, modified or reappeared, with the entry before and after.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.entry_changes.id IS 'Change id.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.entry_changes.snapshot_id IS 'Snapshot in which the change was detected.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.entry_changes.environment IS 'Environment label of the source.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.entry_changes.list_key IS 'Which reference list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.entry_changes.variant IS ''''' for plain lists; carrier or charge-code version otherwise.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.entry_changes.entry_key IS 'The entry''s identity within its list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.entry_changes.code IS 'The entry''s code.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.entry_changes.change IS 'added, removed, modified or reappeared (a key that came back after removal).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.entry_changes.before IS 'The entry before the change (null when added).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.entry_changes.after IS 'The entry after the change (null when removed).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.entry_changes.changed_fields IS 'For modified entries, the top-level fields whose values changed.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.entry_changes.detected_at IS 'When the change was committed (database clock).';
--> statement-breakpoint
COMMENT ON TABLE refdata.alerts IS 'Outbox of notifications: one row per kind of event per snapshot (a digest, not one per entry), with its delivery state.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.alerts.id IS 'Alert id; the webhook-id header is derived from it and stays the same on every retry.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.alerts.snapshot_id IS 'Snapshot the alert is about.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.alerts.kind IS 'added, removed, modified, reappeared, schema_changed, held or failed.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.alerts.payload IS 'The digest sent: list, variant, environment, counts and the codes involved (capped).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.alerts.created_at IS 'When the alert was written, in the same transaction as the data.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.alerts.delivered_at IS 'When a channel accepted it; null until then.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.alerts.attempts IS 'Delivery attempts made.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.alerts.last_error IS 'Why the last attempt failed.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.alerts.environment IS 'Environment label of the source.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.alerts.list_key IS 'Which reference list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.alerts.variant IS 'Variant of the list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.alerts.state IS 'pending, delivered, dead (gave up after retries), disabled (endpoint answered 410 Gone) or skipped (no channel configured).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.alerts.next_attempt_at IS 'When the next delivery attempt is due.';
--> statement-breakpoint
COMMENT ON TABLE refdata.webhook_endpoints IS 'Webhook endpoints the dispatcher stopped using, for example after HTTP 410 Gone.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.webhook_endpoints.url IS 'The endpoint (origin and path, never a secret).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.webhook_endpoints.disabled_at IS 'When it was disabled; null when re-enabled.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.webhook_endpoints.reason IS 'Why.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.webhook_endpoints.updated_at IS 'Last change of this row.';
--> statement-breakpoint
CREATE VIEW refdata.current_entries AS
SELECT environment, list_key, variant, entry_key, code, description, payload, valid_from
FROM refdata.entries
WHERE valid_to IS NULL;
--> statement-breakpoint
COMMENT ON VIEW refdata.current_entries IS 'Every entry that exists now, across all lists, variants and environments.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.current_entries.environment IS 'Environment label of the source (sandbox, production, ...).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.current_entries.list_key IS 'Which reference list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.current_entries.variant IS ''''' for plain lists; the carrier for carrier_package_types; the version for charge_codes.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.current_entries.entry_key IS 'The entry''s identity within its list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.current_entries.code IS 'The entry''s code as other APIs reference it.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.current_entries.description IS 'Human-readable description.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.current_entries.payload IS 'The whole entry as served, unknown fields included.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.current_entries.valid_from IS 'Since when this version of the entry has been current.';
--> statement-breakpoint
CREATE VIEW refdata.accessorials AS
SELECT environment, variant AS variant, entry_key, code, description, payload, valid_from
FROM refdata.current_entries
WHERE list_key = 'accessorials';
--> statement-breakpoint
COMMENT ON VIEW refdata.accessorials IS 'Current pickup and delivery accessorials.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.accessorials.environment IS 'Environment label of the source (sandbox, production, ...).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.accessorials.variant IS 'Always '''' for this list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.accessorials.entry_key IS 'The entry''s identity within its list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.accessorials.code IS 'The entry''s code as other APIs reference it.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.accessorials.description IS 'Human-readable description.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.accessorials.payload IS 'The whole entry as served, unknown fields included.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.accessorials.valid_from IS 'Since when this version of the entry has been current.';
--> statement-breakpoint
CREATE VIEW refdata.appointment_types AS
SELECT environment, variant AS variant, entry_key, code, description, payload, valid_from
FROM refdata.current_entries
WHERE list_key = 'appointment_types';
--> statement-breakpoint
COMMENT ON VIEW refdata.appointment_types IS 'Current pickup and delivery appointment types.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.appointment_types.environment IS 'Environment label of the source (sandbox, production, ...).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.appointment_types.variant IS 'Always '''' for this list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.appointment_types.entry_key IS 'The entry''s identity within its list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.appointment_types.code IS 'The entry''s code as other APIs reference it.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.appointment_types.description IS 'Human-readable description.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.appointment_types.payload IS 'The whole entry as served, unknown fields included.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.appointment_types.valid_from IS 'Since when this version of the entry has been current.';
--> statement-breakpoint
CREATE VIEW refdata.charge_codes AS
SELECT environment, variant AS version, entry_key, code, description, payload, valid_from
FROM refdata.current_entries
WHERE list_key = 'charge_codes';
--> statement-breakpoint
COMMENT ON VIEW refdata.charge_codes IS 'Current charge codes of the versioned charge-code standard, one set per kept version.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.charge_codes.environment IS 'Environment label of the source (sandbox, production, ...).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.charge_codes.entry_key IS 'The entry''s identity within its list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.charge_codes.code IS 'The entry''s code as other APIs reference it.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.charge_codes.description IS 'Human-readable description.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.charge_codes.payload IS 'The whole entry as served, unknown fields included.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.charge_codes.valid_from IS 'Since when this version of the entry has been current.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.charge_codes.version IS 'Charge-code version: a date sent as X-Service-Version, or unpinned (the account setting, else the latest).';
--> statement-breakpoint
CREATE VIEW refdata.charge_line_item_categories AS
SELECT environment, variant AS variant, entry_key, code, description, payload, valid_from
FROM refdata.current_entries
WHERE list_key = 'charge_line_item_categories';
--> statement-breakpoint
COMMENT ON VIEW refdata.charge_line_item_categories IS 'Current charge line item categories.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.charge_line_item_categories.environment IS 'Environment label of the source (sandbox, production, ...).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.charge_line_item_categories.variant IS 'Always '''' for this list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.charge_line_item_categories.entry_key IS 'The entry''s identity within its list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.charge_line_item_categories.code IS 'The entry''s code as other APIs reference it.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.charge_line_item_categories.description IS 'Human-readable description.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.charge_line_item_categories.payload IS 'The whole entry as served, unknown fields included.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.charge_line_item_categories.valid_from IS 'Since when this version of the entry has been current.';
--> statement-breakpoint
CREATE VIEW refdata.document_types AS
SELECT environment, variant AS variant, entry_key, code, description, payload, valid_from
FROM refdata.current_entries
WHERE list_key = 'document_types';
--> statement-breakpoint
COMMENT ON VIEW refdata.document_types IS 'Current supported document types.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.document_types.environment IS 'Environment label of the source (sandbox, production, ...).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.document_types.variant IS 'Always '''' for this list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.document_types.entry_key IS 'The entry''s identity within its list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.document_types.code IS 'The entry''s code as other APIs reference it.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.document_types.description IS 'Human-readable description.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.document_types.payload IS 'The whole entry as served, unknown fields included.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.document_types.valid_from IS 'Since when this version of the entry has been current.';
--> statement-breakpoint
CREATE VIEW refdata.equipment_types AS
SELECT environment, variant AS variant, entry_key, code, description, payload, valid_from
FROM refdata.current_entries
WHERE list_key = 'equipment_types';
--> statement-breakpoint
COMMENT ON VIEW refdata.equipment_types IS 'Current equipment (trailer/container) types.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.equipment_types.environment IS 'Environment label of the source (sandbox, production, ...).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.equipment_types.variant IS 'Always '''' for this list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.equipment_types.entry_key IS 'The entry''s identity within its list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.equipment_types.code IS 'The entry''s code as other APIs reference it.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.equipment_types.description IS 'Human-readable description.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.equipment_types.payload IS 'The whole entry as served, unknown fields included.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.equipment_types.valid_from IS 'Since when this version of the entry has been current.';
--> statement-breakpoint
CREATE VIEW refdata.hazmat AS
SELECT environment, variant AS variant, entry_key, code, description, payload, valid_from
FROM refdata.current_entries
WHERE list_key = 'hazmat';
--> statement-breakpoint
COMMENT ON VIEW refdata.hazmat IS 'Current hazardous material classes and divisions.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.hazmat.environment IS 'Environment label of the source (sandbox, production, ...).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.hazmat.variant IS 'Always '''' for this list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.hazmat.entry_key IS 'The entry''s identity within its list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.hazmat.code IS 'The entry''s code as other APIs reference it.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.hazmat.description IS 'Human-readable description.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.hazmat.payload IS 'The whole entry as served, unknown fields included.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.hazmat.valid_from IS 'Since when this version of the entry has been current.';
--> statement-breakpoint
CREATE VIEW refdata.location_types AS
SELECT environment, variant AS variant, entry_key, code, description, payload, valid_from
FROM refdata.current_entries
WHERE list_key = 'location_types';
--> statement-breakpoint
COMMENT ON VIEW refdata.location_types IS 'Current location type codes.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.location_types.environment IS 'Environment label of the source (sandbox, production, ...).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.location_types.variant IS 'Always '''' for this list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.location_types.entry_key IS 'The entry''s identity within its list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.location_types.code IS 'The entry''s code as other APIs reference it.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.location_types.description IS 'Human-readable description.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.location_types.payload IS 'The whole entry as served, unknown fields included.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.location_types.valid_from IS 'Since when this version of the entry has been current.';
--> statement-breakpoint
CREATE VIEW refdata.nmfc_codes AS
SELECT environment, variant AS variant, entry_key, code, description, payload, valid_from
FROM refdata.current_entries
WHERE list_key = 'nmfc_codes';
--> statement-breakpoint
COMMENT ON VIEW refdata.nmfc_codes IS 'Current National Motor Freight Classification items.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.nmfc_codes.environment IS 'Environment label of the source (sandbox, production, ...).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.nmfc_codes.variant IS 'Always '''' for this list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.nmfc_codes.entry_key IS 'The entry''s identity within its list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.nmfc_codes.code IS 'The entry''s code as other APIs reference it.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.nmfc_codes.description IS 'Human-readable description.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.nmfc_codes.payload IS 'The whole entry as served, unknown fields included.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.nmfc_codes.valid_from IS 'Since when this version of the entry has been current.';
--> statement-breakpoint
CREATE VIEW refdata.package_types AS
SELECT environment, variant AS variant, entry_key, code, description, payload, valid_from
FROM refdata.current_entries
WHERE list_key = 'package_types';
--> statement-breakpoint
COMMENT ON VIEW refdata.package_types IS 'Current package types of the platform.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.package_types.environment IS 'Environment label of the source (sandbox, production, ...).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.package_types.variant IS 'Always '''' for this list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.package_types.entry_key IS 'The entry''s identity within its list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.package_types.code IS 'The entry''s code as other APIs reference it.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.package_types.description IS 'Human-readable description.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.package_types.payload IS 'The whole entry as served, unknown fields included.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.package_types.valid_from IS 'Since when this version of the entry has been current.';
--> statement-breakpoint
CREATE VIEW refdata.carrier_package_types AS
SELECT environment, variant AS carrier, entry_key, code, description, payload, valid_from
FROM refdata.current_entries
WHERE list_key = 'carrier_package_types';
--> statement-breakpoint
COMMENT ON VIEW refdata.carrier_package_types IS 'Current package types of each carrier.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.carrier_package_types.environment IS 'Environment label of the source (sandbox, production, ...).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.carrier_package_types.entry_key IS 'The entry''s identity within its list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.carrier_package_types.code IS 'The entry''s code as other APIs reference it.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.carrier_package_types.description IS 'Human-readable description.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.carrier_package_types.payload IS 'The whole entry as served, unknown fields included.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.carrier_package_types.valid_from IS 'Since when this version of the entry has been current.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.carrier_package_types.carrier IS 'Carrier the package types belong to (fedex, ups, usps, dhl, ...).';
--> statement-breakpoint
CREATE VIEW refdata.piece_types AS
SELECT environment, variant AS variant, entry_key, code, description, payload, valid_from
FROM refdata.current_entries
WHERE list_key = 'piece_types';
--> statement-breakpoint
COMMENT ON VIEW refdata.piece_types IS 'Current piece types.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.piece_types.environment IS 'Environment label of the source (sandbox, production, ...).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.piece_types.variant IS 'Always '''' for this list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.piece_types.entry_key IS 'The entry''s identity within its list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.piece_types.code IS 'The entry''s code as other APIs reference it.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.piece_types.description IS 'Human-readable description.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.piece_types.payload IS 'The whole entry as served, unknown fields included.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.piece_types.valid_from IS 'Since when this version of the entry has been current.';
--> statement-breakpoint
CREATE VIEW refdata.vendor_poc_roles AS
SELECT environment, variant AS variant, entry_key, code, description, payload, valid_from
FROM refdata.current_entries
WHERE list_key = 'vendor_poc_roles';
--> statement-breakpoint
COMMENT ON VIEW refdata.vendor_poc_roles IS 'Current vendor point-of-contact roles and job titles.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.vendor_poc_roles.environment IS 'Environment label of the source (sandbox, production, ...).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.vendor_poc_roles.variant IS 'Always '''' for this list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.vendor_poc_roles.entry_key IS 'The entry''s identity within its list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.vendor_poc_roles.code IS 'The entry''s code as other APIs reference it.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.vendor_poc_roles.description IS 'Human-readable description.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.vendor_poc_roles.payload IS 'The whole entry as served, unknown fields included.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.vendor_poc_roles.valid_from IS 'Since when this version of the entry has been current.';
--> statement-breakpoint
CREATE VIEW refdata.service_levels AS
SELECT environment, variant AS variant, entry_key, code, description, payload, valid_from
FROM refdata.current_entries
WHERE list_key = 'service_levels';
--> statement-breakpoint
COMMENT ON VIEW refdata.service_levels IS 'Current service levels.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.service_levels.environment IS 'Environment label of the source (sandbox, production, ...).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.service_levels.variant IS 'Always '''' for this list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.service_levels.entry_key IS 'The entry''s identity within its list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.service_levels.code IS 'The entry''s code as other APIs reference it.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.service_levels.description IS 'Human-readable description.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.service_levels.payload IS 'The whole entry as served, unknown fields included.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.service_levels.valid_from IS 'Since when this version of the entry has been current.';
--> statement-breakpoint
CREATE VIEW refdata.shipment_modes AS
SELECT environment, variant AS variant, entry_key, code, description, payload, valid_from
FROM refdata.current_entries
WHERE list_key = 'shipment_modes';
--> statement-breakpoint
COMMENT ON VIEW refdata.shipment_modes IS 'Current shipment modes (LTL, FTL, PARCEL, ...).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.shipment_modes.environment IS 'Environment label of the source (sandbox, production, ...).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.shipment_modes.variant IS 'Always '''' for this list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.shipment_modes.entry_key IS 'The entry''s identity within its list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.shipment_modes.code IS 'The entry''s code as other APIs reference it.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.shipment_modes.description IS 'Human-readable description.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.shipment_modes.payload IS 'The whole entry as served, unknown fields included.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.shipment_modes.valid_from IS 'Since when this version of the entry has been current.';
--> statement-breakpoint
CREATE VIEW refdata.shipment_rep_roles AS
SELECT environment, variant AS variant, entry_key, code, description, payload, valid_from
FROM refdata.current_entries
WHERE list_key = 'shipment_rep_roles';
--> statement-breakpoint
COMMENT ON VIEW refdata.shipment_rep_roles IS 'Current shipment representative roles.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.shipment_rep_roles.environment IS 'Environment label of the source (sandbox, production, ...).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.shipment_rep_roles.variant IS 'Always '''' for this list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.shipment_rep_roles.entry_key IS 'The entry''s identity within its list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.shipment_rep_roles.code IS 'The entry''s code as other APIs reference it.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.shipment_rep_roles.description IS 'Human-readable description.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.shipment_rep_roles.payload IS 'The whole entry as served, unknown fields included.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.shipment_rep_roles.valid_from IS 'Since when this version of the entry has been current.';
--> statement-breakpoint
CREATE VIEW refdata.stop_status_reason_codes AS
SELECT environment, variant AS variant, entry_key, code, description, payload, valid_from
FROM refdata.current_entries
WHERE list_key = 'stop_status_reason_codes';
--> statement-breakpoint
COMMENT ON VIEW refdata.stop_status_reason_codes IS 'Current stop status reason codes.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.stop_status_reason_codes.environment IS 'Environment label of the source (sandbox, production, ...).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.stop_status_reason_codes.variant IS 'Always '''' for this list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.stop_status_reason_codes.entry_key IS 'The entry''s identity within its list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.stop_status_reason_codes.code IS 'The entry''s code as other APIs reference it.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.stop_status_reason_codes.description IS 'Human-readable description.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.stop_status_reason_codes.payload IS 'The whole entry as served, unknown fields included.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.stop_status_reason_codes.valid_from IS 'Since when this version of the entry has been current.';
--> statement-breakpoint
CREATE VIEW refdata.shipment_statuses AS
SELECT environment, variant AS variant, entry_key, code, description, payload, valid_from
FROM refdata.current_entries
WHERE list_key = 'shipment_statuses';
--> statement-breakpoint
COMMENT ON VIEW refdata.shipment_statuses IS 'Current shipment statuses (states).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.shipment_statuses.environment IS 'Environment label of the source (sandbox, production, ...).';
--> statement-breakpoint
COMMENT ON COLUMN refdata.shipment_statuses.variant IS 'Always '''' for this list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.shipment_statuses.entry_key IS 'The entry''s identity within its list.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.shipment_statuses.code IS 'The entry''s code as other APIs reference it.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.shipment_statuses.description IS 'Human-readable description.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.shipment_statuses.payload IS 'The whole entry as served, unknown fields included.';
--> statement-breakpoint
COMMENT ON COLUMN refdata.shipment_statuses.valid_from IS 'Since when this version of the entry has been current.';
--> statement-breakpoint
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'refdata_reader') THEN
    CREATE ROLE refdata_reader NOLOGIN;
  END IF;
END
$$;
--> statement-breakpoint
GRANT USAGE ON SCHEMA refdata TO refdata_reader;
--> statement-breakpoint
GRANT SELECT ON ALL TABLES IN SCHEMA refdata TO refdata_reader;
--> statement-breakpoint
ALTER DEFAULT PRIVILEGES IN SCHEMA refdata GRANT SELECT ON TABLES TO refdata_reader;
