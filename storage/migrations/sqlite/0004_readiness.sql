-- The readiness probe proves that the database takes writes by writing its
-- one row here (the time of the latest probe).
CREATE TABLE readiness (
	id         INTEGER PRIMARY KEY CHECK (id = 1),
	checked_at INTEGER NOT NULL
);
