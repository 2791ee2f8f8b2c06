// Package storage keeps PulseWire's records and media: schemas, embedded
// migrations, queries and transactions, on one of two databases, and files
// in one of two media stores, behind the same methods.
//
//   - SQLite (Open) and media folders (NewMediaDir): one box, the default.
//   - PostgreSQL (OpenPostgres) and an S3-compatible bucket (OpenS3Media):
//     several instances of the server sharing both.
//
// One environment is one database file or one PostgreSQL schema, and one
// media folder or one prefix of the bucket; nothing is shared between
// environments. Everything the service counts for a client (sessions of a
// token, session openings, API requests, monthly credits) is decided in a
// database transaction, so it holds for all instances at once. The SQL is
// written once, in what both databases accept (engine.go keeps the few
// differences), and each schema change is a migration file of the same name
// in migrations/sqlite and migrations/postgres.
package storage
