-- The readiness probe's one row, as sqlite/0004_readiness.sql (which says
-- what it is for).
CREATE TABLE readiness (
	id         INTEGER PRIMARY KEY CHECK (id = 1),
	checked_at BIGINT  NOT NULL
);
