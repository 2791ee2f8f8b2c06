-- Several instances of the server on one database (postgres/0003_cluster.sql
-- is the same in PostgreSQL's types). Everything they count together lives
-- here, and what one instance holds in memory (a live session, a run) is
-- recorded with the instance, so that the others can reach it or, when the
-- instance is gone, finish what it left.

-- An instance of the server working on this environment: the address (host:port)
-- at which the other instances reach its listener, and when it last said it
-- was alive (seen_at, rewritten by its heartbeat).
CREATE TABLE instances (
	id         TEXT    PRIMARY KEY,
	address    TEXT    NOT NULL,
	started_at INTEGER NOT NULL,
	seen_at    INTEGER NOT NULL
);

-- The run of a started measure belongs to the instance that started it
-- (run_owner) and gives the measure its kind (run_kind) when it ends. When
-- that instance is gone, a sweep ends the run.
ALTER TABLE measures ADD COLUMN run_owner TEXT;
ALTER TABLE measures ADD COLUMN run_kind TEXT;

-- A live session and the instance that holds it: any instance hands on a
-- resume or a WHIP DELETE to it. Rows of a gone instance go with it.
CREATE TABLE live_sessions (
	id        TEXT    PRIMARY KEY,
	instance  TEXT    NOT NULL,
	opened_at INTEGER NOT NULL
);
CREATE INDEX live_sessions_by_instance ON live_sessions (instance);

-- Each client's session openings of the last minute, for the opening rate.
CREATE TABLE session_openings (
	client    INTEGER NOT NULL REFERENCES clients (key),
	opened_at INTEGER NOT NULL
);
CREATE INDEX session_openings_by_client ON session_openings (client, opened_at);

-- The request rate limits of each client: one token bucket per limit
-- (name), holding tokens at time at.
CREATE TABLE request_buckets (
	client INTEGER NOT NULL REFERENCES clients (key),
	name   TEXT    NOT NULL,
	tokens REAL    NOT NULL,
	at     INTEGER NOT NULL,
	PRIMARY KEY (client, name)
);
