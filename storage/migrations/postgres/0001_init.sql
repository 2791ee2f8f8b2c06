-- The first schema, as sqlite/0001_init.sql: the same tables, columns and
-- indexes, in PostgreSQL's types. Times are Unix milliseconds (UTC). Every
-- table names its owner client by the client's integer key, so that a query
-- can never reach another client's rows without saying so.

-- A client is one company account of this environment. Its API key is stored
-- only as a SHA-256 hash.
CREATE TABLE clients (
	key             BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id              TEXT    NOT NULL UNIQUE,
	name            TEXT    NOT NULL,
	api_key_hash    BYTEA   NOT NULL UNIQUE,
	variables       TEXT    NOT NULL,            -- JSON array of variable names
	monthly_credits BIGINT,                      -- NULL: unlimited
	active          BOOLEAN NOT NULL DEFAULT TRUE,
	measures        BIGINT  NOT NULL DEFAULT 0,  -- how many measures it holds
	created_at      BIGINT  NOT NULL,
	deactivated_at  BIGINT
);

-- An access token (ivat-). Its value is stored only as a SHA-256 hash; a
-- revoked token keeps its row (revoked_at set) so that revocation is final.
CREATE TABLE access_tokens (
	key         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id          TEXT   NOT NULL UNIQUE,
	client      BIGINT NOT NULL REFERENCES clients (key),
	value_hash  BYTEA  NOT NULL UNIQUE,
	description TEXT,
	created_at  BIGINT NOT NULL,
	expires_at  BIGINT NOT NULL,
	revoked_at  BIGINT
);

-- One row per permission of a token; sessions are counted per permission
-- with one conditional UPDATE of sessions_opened (below max_sessions), which
-- holds the row's lock: concurrent openings on any instance count exactly.
CREATE TABLE token_permissions (
	token           BIGINT NOT NULL REFERENCES access_tokens (key) ON DELETE CASCADE,
	name            TEXT   NOT NULL,
	position        BIGINT NOT NULL,             -- order as sent
	max_sessions    BIGINT,                      -- NULL: no limit
	sessions_opened BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (token, name)
);

-- A measure. seq is the creation order, which lists follow (newest first).
CREATE TABLE measures (
	seq                BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id                 TEXT    NOT NULL UNIQUE,
	client             BIGINT  NOT NULL REFERENCES clients (key),
	kind               TEXT    CHECK (kind IN ('rppg', 'cppg')),   -- set by the run
	status             TEXT    NOT NULL CHECK (status IN ('created', 'started', 'ended')),
	created_at         BIGINT  NOT NULL,
	started_at         BIGINT,
	ended_at           BIGINT,
	has_user_data      BOOLEAN NOT NULL,
	external_id        TEXT,
	sex                TEXT,
	age                BIGINT,
	weight             BIGINT,
	height             BIGINT,
	smoking_status     TEXT,
	desired_variables  TEXT,                     -- JSON array or NULL
	unwanted_variables TEXT,                     -- JSON array or NULL
	tags               TEXT    NOT NULL,         -- JSON array, as sent
	tag_set            BIGINT  NOT NULL,         -- tag_sets (key), below
	compute_options    TEXT,                     -- JSON object or NULL
	returned_variables TEXT,                     -- JSON array, ended only
	signal             TEXT,                     -- JSON object or NULL, ended only
	variables          TEXT                      -- JSON object, ended only
);
CREATE INDEX measures_by_client ON measures (client, seq, tag_set);
CREATE INDEX measures_by_tag_set ON measures (client, tag_set, seq);
CREATE INDEX measures_by_kind ON measures (client, kind, seq);
CREATE INDEX measures_by_external_id ON measures (client, external_id) WHERE external_id IS NOT NULL;

-- The tag index (see sqlite/0001_init.sql): measures that carry exactly the
-- same set of distinct tags share one row, which counts them.
CREATE TABLE tag_sets (
	key      BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	client   BIGINT NOT NULL REFERENCES clients (key),
	digest   BYTEA  NOT NULL,
	size     BIGINT NOT NULL,                    -- distinct tags
	measures BIGINT NOT NULL,                    -- measures carrying exactly this set
	UNIQUE (client, digest)
);
CREATE INDEX tag_sets_by_size ON tag_sets (client, size, measures);
ALTER TABLE measures ADD FOREIGN KEY (tag_set) REFERENCES tag_sets (key);

CREATE TABLE tag_set_members (
	client  BIGINT NOT NULL,
	tag     TEXT   NOT NULL,
	tag_set BIGINT NOT NULL REFERENCES tag_sets (key) ON DELETE CASCADE,
	size    BIGINT NOT NULL,
	PRIMARY KEY (client, tag, tag_set)
);
CREATE INDEX tag_set_members_by_size ON tag_set_members (client, tag, size);
CREATE INDEX tag_set_members_by_set ON tag_set_members (tag_set);

-- A reference blood pressure entered for a person (externalId) after one of
-- their measures, per sensor kind. rowid is the insertion order, as SQLite's
-- implicit rowid, so that one query orders the calibrations of both.
CREATE TABLE calibrations (
	rowid       BIGINT GENERATED ALWAYS AS IDENTITY,
	client      BIGINT NOT NULL REFERENCES clients (key),
	external_id TEXT   NOT NULL,
	kind        TEXT   NOT NULL CHECK (kind IN ('rppg', 'cppg')),
	measure_id  TEXT   NOT NULL,
	systole     DOUBLE PRECISION NOT NULL,
	diastole    DOUBLE PRECISION NOT NULL,
	created_at  BIGINT NOT NULL,
	PRIMARY KEY (client, external_id, kind, measure_id)
);
