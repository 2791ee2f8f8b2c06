-- The first schema. Times are Unix milliseconds (UTC). Every table names its
-- owner client by the client's integer key, so that a query can never reach
-- another client's rows without saying so. Kept to portable SQL where it costs
-- nothing (the planned next home is PostgreSQL).

-- A client is one company account of this environment. Its API key is stored
-- only as a SHA-256 hash.
CREATE TABLE clients (
	key             INTEGER PRIMARY KEY,
	id              TEXT    NOT NULL UNIQUE,
	name            TEXT    NOT NULL,
	api_key_hash    BLOB    NOT NULL UNIQUE,
	variables       TEXT    NOT NULL,            -- JSON array of variable names
	monthly_credits INTEGER,                     -- NULL: unlimited
	active          INTEGER NOT NULL DEFAULT 1,
	measures        INTEGER NOT NULL DEFAULT 0,  -- how many measures it holds
	created_at      INTEGER NOT NULL,
	deactivated_at  INTEGER
);

-- An access token (ivat-). Its value is stored only as a SHA-256 hash; a
-- revoked token keeps its row (revoked_at set) so that revocation is final.
CREATE TABLE access_tokens (
	key         INTEGER PRIMARY KEY,
	id          TEXT    NOT NULL UNIQUE,
	client      INTEGER NOT NULL REFERENCES clients (key),
	value_hash  BLOB    NOT NULL UNIQUE,
	description TEXT,
	created_at  INTEGER NOT NULL,
	expires_at  INTEGER NOT NULL,
	revoked_at  INTEGER
);

-- One row per permission of a token. Sessions are counted per permission: the
-- session server opens a session with one conditional UPDATE of
-- sessions_opened (below max_sessions) in the transaction that looked the
-- token up by value_hash.
CREATE TABLE token_permissions (
	token           INTEGER NOT NULL REFERENCES access_tokens (key) ON DELETE CASCADE,
	name            TEXT    NOT NULL,
	position        INTEGER NOT NULL,            -- order as sent
	max_sessions    INTEGER,                     -- NULL: no limit
	sessions_opened INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (token, name)
) WITHOUT ROWID;

-- A measure. seq is the creation order, which lists follow (newest first).
-- userData is kept as columns; a date of birth is turned into the age at
-- creation and not stored.
CREATE TABLE measures (
	seq                INTEGER PRIMARY KEY,
	id                 TEXT    NOT NULL UNIQUE,
	client             INTEGER NOT NULL REFERENCES clients (key),
	kind               TEXT    CHECK (kind IN ('rppg', 'cppg')),   -- set by the run
	status             TEXT    NOT NULL CHECK (status IN ('created', 'started', 'ended')),
	created_at         INTEGER NOT NULL,
	started_at         INTEGER,
	ended_at           INTEGER,
	has_user_data      INTEGER NOT NULL,
	external_id        TEXT,
	sex                TEXT,
	age                INTEGER,
	weight             INTEGER,
	height             INTEGER,
	smoking_status     TEXT,
	desired_variables  TEXT,                     -- JSON array or NULL
	unwanted_variables TEXT,                     -- JSON array or NULL
	tags               TEXT    NOT NULL,         -- JSON array, as sent
	tag_set            INTEGER NOT NULL REFERENCES tag_sets (key),
	compute_options    TEXT,                     -- JSON object or NULL
	returned_variables TEXT,                     -- JSON array, ended only
	signal             TEXT,                     -- JSON object or NULL, ended only
	variables          TEXT                      -- JSON object, ended only
);
CREATE INDEX measures_by_client ON measures (client, seq, tag_set);
CREATE INDEX measures_by_tag_set ON measures (client, tag_set, seq);
CREATE INDEX measures_by_kind ON measures (client, kind, seq);
CREATE INDEX measures_by_external_id ON measures (client, external_id) WHERE external_id IS NOT NULL;

-- The tag index. Measures that carry exactly the same set of distinct tags
-- share one tag_sets row, which counts them; a client has far fewer tag sets
-- than measures, so a tag filter is decided per tag set and the size of any
-- filtered list is a sum over tag sets, never a count over measures. A tag
-- set is found by the SHA-256 of its sorted tags, and deleted when its last
-- measure goes.
CREATE TABLE tag_sets (
	key      INTEGER PRIMARY KEY,
	client   INTEGER NOT NULL REFERENCES clients (key),
	digest   BLOB    NOT NULL,
	size     INTEGER NOT NULL,                   -- distinct tags
	measures INTEGER NOT NULL,                   -- measures carrying exactly this set
	UNIQUE (client, digest)
);
CREATE INDEX tag_sets_by_size ON tag_sets (client, size, measures);

-- One row per tag of a set. size repeats the set's size so that
-- contained-by reads only the members of sets small enough to qualify.
CREATE TABLE tag_set_members (
	client  INTEGER NOT NULL,
	tag     TEXT    NOT NULL,
	tag_set INTEGER NOT NULL REFERENCES tag_sets (key) ON DELETE CASCADE,
	size    INTEGER NOT NULL,
	PRIMARY KEY (client, tag, tag_set)
) WITHOUT ROWID;
CREATE INDEX tag_set_members_by_size ON tag_set_members (client, tag, size);
CREATE INDEX tag_set_members_by_set ON tag_set_members (tag_set);

-- A reference blood pressure entered for a person (externalId) after one of
-- their measures, per sensor kind. Written by the calibration route.
CREATE TABLE calibrations (
	client      INTEGER NOT NULL REFERENCES clients (key),
	external_id TEXT    NOT NULL,
	kind        TEXT    NOT NULL CHECK (kind IN ('rppg', 'cppg')),
	measure_id  TEXT    NOT NULL,
	systole     REAL    NOT NULL,
	diastole    REAL    NOT NULL,
	created_at  INTEGER NOT NULL,
	PRIMARY KEY (client, external_id, kind, measure_id)
);
