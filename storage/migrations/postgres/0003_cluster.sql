-- Several instances of the server on one database, as
-- sqlite/0003_cluster.sql (which says what each table is for).
CREATE TABLE instances (
	id         TEXT   PRIMARY KEY,
	address    TEXT   NOT NULL,
	started_at BIGINT NOT NULL,
	seen_at    BIGINT NOT NULL
);

ALTER TABLE measures ADD COLUMN run_owner TEXT;
ALTER TABLE measures ADD COLUMN run_kind TEXT;

CREATE TABLE live_sessions (
	id        TEXT   PRIMARY KEY,
	instance  TEXT   NOT NULL,
	opened_at BIGINT NOT NULL
);
CREATE INDEX live_sessions_by_instance ON live_sessions (instance);

CREATE TABLE session_openings (
	client    BIGINT NOT NULL REFERENCES clients (key),
	opened_at BIGINT NOT NULL
);
CREATE INDEX session_openings_by_client ON session_openings (client, opened_at);

CREATE TABLE request_buckets (
	client BIGINT NOT NULL REFERENCES clients (key),
	name   TEXT   NOT NULL,
	tokens DOUBLE PRECISION NOT NULL,
	at     BIGINT NOT NULL,
	PRIMARY KEY (client, name)
);
