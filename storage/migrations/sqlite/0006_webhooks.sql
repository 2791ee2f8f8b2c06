-- Webhooks (postgres/0006_webhooks.sql is the same in PostgreSQL's types).

-- An endpoint a client registered: the URL its events are posted to, the
-- events it wants (a JSON array of names), and the secret the deliveries
-- are signed with. The secret is kept as it is, not as a hash: signing
-- needs it.
CREATE TABLE webhook_endpoints (
	key        INTEGER PRIMARY KEY,
	id         TEXT    NOT NULL UNIQUE,
	client     INTEGER NOT NULL REFERENCES clients (key),
	url        TEXT    NOT NULL,
	events     TEXT    NOT NULL,
	secret     TEXT    NOT NULL,
	created_at INTEGER NOT NULL
);
CREATE INDEX webhook_endpoints_by_client ON webhook_endpoints (client, created_at);

-- The outbox: one delivery of one event to one endpoint, written in the
-- transaction that ends or deletes the measure, so that no event is lost
-- to a crash. The event is kept as its fields (event_id is shared by the
-- deliveries of one event to several endpoints), never as person data.
-- outcome is pending until the endpoint answered 2xx (delivered) or
-- give_up_at passed (failed); next_at is when a pending delivery is due.
-- A dispatcher claims a due delivery by writing its instance in leased_by
-- until leased_until; a claim that expires (its instance died) is due again.
CREATE TABLE webhook_deliveries (
	id              TEXT    PRIMARY KEY,
	endpoint        INTEGER NOT NULL REFERENCES webhook_endpoints (key) ON DELETE CASCADE,
	event_id        TEXT    NOT NULL,
	event_type      TEXT    NOT NULL,
	event_at        INTEGER NOT NULL,
	measure_id      TEXT    NOT NULL,
	measure_status  TEXT    NOT NULL,
	measure_kind    TEXT,
	outcome         TEXT    NOT NULL,
	attempts        INTEGER NOT NULL DEFAULT 0,
	next_at         INTEGER,
	give_up_at      INTEGER NOT NULL,
	last_attempt_at INTEGER,
	last_status     INTEGER,
	last_error      TEXT,
	leased_by       TEXT,
	leased_until    INTEGER
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at) WHERE outcome = 'pending';
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint, event_at);
CREATE INDEX webhook_deliveries_pending_by_endpoint ON webhook_deliveries (endpoint, next_at) WHERE outcome = 'pending';
