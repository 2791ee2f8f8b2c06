// Package storage keeps PulseWire's records in embedded SQLite (schema,
// migrations, queries, transactions) and its media files on disk. One
// environment is one database file and one media folder; nothing is shared
// between environments.
package storage
