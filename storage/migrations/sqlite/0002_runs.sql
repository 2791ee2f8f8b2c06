-- Measurement runs: what a run stores beside a measure, monthly credits and
-- the pulse features a calibration is anchored to.

-- by_run marks a measure a create-and-run route inserted already started:
-- a run that fails or is cut short by a crash removes it, where a measure
-- created by POST /measures goes back to created. features holds the pulse
-- features of an ended measure (JSON, NULL without a usable pulse).
ALTER TABLE measures ADD COLUMN by_run INTEGER NOT NULL DEFAULT 0;
ALTER TABLE measures ADD COLUMN features TEXT;
-- The start-up sweep looks for runs a crash cut short.
CREATE INDEX measures_started ON measures (status) WHERE status = 'started';

-- Credits a client spent per calendar month (UTC, 'YYYY-MM'): one per ended
-- measure that computed anything. Kept apart from the measures so that
-- deleting a measure gives no credit back.
CREATE TABLE credit_usage (
	client INTEGER NOT NULL REFERENCES clients (key),
	month  TEXT    NOT NULL,
	used   INTEGER NOT NULL,
	PRIMARY KEY (client, month)
);

-- A calibration keeps the features of the measure it was entered after, so
-- that it survives the deletion of that measure.
ALTER TABLE calibrations ADD COLUMN features TEXT;
CREATE INDEX calibrations_latest ON calibrations (client, external_id, kind, created_at);
