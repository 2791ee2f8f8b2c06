-- Webhooks, as sqlite/0006_webhooks.sql (which says what each table and
-- column is for).
CREATE TABLE webhook_endpoints (
	key        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	id         TEXT   NOT NULL UNIQUE,
	client     BIGINT NOT NULL REFERENCES clients (key),
	url        TEXT   NOT NULL,
	events     TEXT   NOT NULL,
	secret     TEXT   NOT NULL,
	created_at BIGINT NOT NULL
);
CREATE INDEX webhook_endpoints_by_client ON webhook_endpoints (client, created_at);

CREATE TABLE webhook_deliveries (
	id              TEXT    PRIMARY KEY,
	endpoint        BIGINT  NOT NULL REFERENCES webhook_endpoints (key) ON DELETE CASCADE,
	event_id        TEXT    NOT NULL,
	event_type      TEXT    NOT NULL,
	event_at        BIGINT  NOT NULL,
	measure_id      TEXT    NOT NULL,
	measure_status  TEXT    NOT NULL,
	measure_kind    TEXT,
	outcome         TEXT    NOT NULL,
	attempts        INTEGER NOT NULL DEFAULT 0,
	next_at         BIGINT,
	give_up_at      BIGINT  NOT NULL,
	last_attempt_at BIGINT,
	last_status     INTEGER,
	last_error      TEXT,
	leased_by       TEXT,
	leased_until    BIGINT
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at) WHERE outcome = 'pending';
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint, event_at);
CREATE INDEX webhook_deliveries_pending_by_endpoint ON webhook_deliveries (endpoint, next_at) WHERE outcome = 'pending';
