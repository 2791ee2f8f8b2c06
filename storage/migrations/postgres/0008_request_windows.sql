-- The request rate limits of each client, exact over sliding windows: for
-- each limit (name), the times (Unix ms, 8 bytes each, little-endian,
-- oldest first) of the client's latest requests, at most as many as the
-- limit allows in its window. The token buckets of request_buckets let a
-- key spend its limit at once and again as it earned it back, nearly twice
-- the limit within one window; versions that still use them keep them.
CREATE TABLE request_windows (
	client BIGINT NOT NULL REFERENCES clients (key),
	name   TEXT   NOT NULL,
	times  BYTEA  NOT NULL,
	PRIMARY KEY (client, name)
);
