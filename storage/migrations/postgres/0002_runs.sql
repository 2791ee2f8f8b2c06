-- Measurement runs, as sqlite/0002_runs.sql: by_run marks a measure a
-- create-and-run route inserted already started; features holds the pulse
-- features of an ended measure.
ALTER TABLE measures ADD COLUMN by_run BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE measures ADD COLUMN features TEXT;
CREATE INDEX measures_started ON measures (status) WHERE status = 'started';

-- Credits a client spent per calendar month (UTC, 'YYYY-MM').
CREATE TABLE credit_usage (
	client BIGINT NOT NULL REFERENCES clients (key),
	month  TEXT   NOT NULL,
	used   BIGINT NOT NULL,
	PRIMARY KEY (client, month)
);

ALTER TABLE calibrations ADD COLUMN features TEXT;
CREATE INDEX calibrations_latest ON calibrations (client, external_id, kind, created_at);
