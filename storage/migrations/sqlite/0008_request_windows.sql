-- The request rate limits of each client that are exact over a sliding
-- window (the token mints'; the general limit stays a bucket, in
-- request_buckets, which lets a key spend its limit at once and again as
-- it earns it back): for each limit (name), the times (Unix ms, 8 bytes
-- each, little-endian, oldest first) of the client's requests of the last
-- window, at most as many as the limit allows in it.
CREATE TABLE request_windows (
	client INTEGER NOT NULL REFERENCES clients (key),
	name   TEXT    NOT NULL,
	times  BLOB    NOT NULL,
	PRIMARY KEY (client, name)
);
