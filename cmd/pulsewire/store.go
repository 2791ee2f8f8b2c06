package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/pulsewire/pulsewire/control"
	"github.com/pulsewire/pulsewire/storage"
)

// storeConfig says where the environments keep their records and media:
// under --data-dir (SQLite files and media folders, one box), or in a
// PostgreSQL database and an S3-compatible bucket that several instances
// of the server share.
type storeConfig struct {
	dataDir     string
	databaseURL string
	mediaURL    string
}

// storeFlags adds the flags of a storeConfig to fs: serve and every client
// command take them, so that one set of settings (flags or PULSEWIRE_
// variables) reaches the same data from both.
func storeFlags(fs *flag.FlagSet, cfg *storeConfig) {
	fs.StringVar(&cfg.dataDir, "data-dir", "./data", "folder of both environments' SQLite databases and media folders (one subfolder each), when --database-url and --media-url leave them there")
	fs.StringVar(&cfg.databaseURL, "database-url", "", "PostgreSQL database shared by several instances, postgres://USER:PASSWORD@HOST:PORT/DB?sslmode=..., each environment in its own schema (production, test); empty: SQLite files under --data-dir")
	fs.StringVar(&cfg.mediaURL, "media-url", "", "S3-compatible bucket of the media, s3://BUCKET/PREFIX?endpoint=URL&region=R, each environment under PREFIX/<env>/, credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; empty: media folders under --data-dir")
}

// check refuses URLs of the wrong kind before anything is opened.
func (c storeConfig) check() error {
	if c.databaseURL != "" {
		u, err := url.Parse(c.databaseURL)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			return errors.New("--database-url: want postgres://USER:PASSWORD@HOST:PORT/DB?sslmode=MODE")
		}
	}
	if c.mediaURL != "" {
		if err := storage.CheckS3URL(c.mediaURL); err != nil {
			return fmt.Errorf("--media-url: %w", err)
		}
	}
	return nil
}

// describe says where the environments' data is, for the log: never a
// password.
func (c storeConfig) describe() (database, media string) {
	database, media = "sqlite under "+c.dataDir, "folders under "+c.dataDir
	if u, err := url.Parse(c.databaseURL); err == nil && c.databaseURL != "" {
		database = "postgres at " + u.Host + u.Path
	}
	if u, err := url.Parse(c.mediaURL); err == nil && c.mediaURL != "" {
		media = "s3 bucket " + u.Host + u.Path
	}
	return database, media
}

// openDatabase opens the database of env: <dataDir>/<env>/pulsewire.db, or
// the schema env of the PostgreSQL database.
func (c storeConfig) openDatabase(ctx context.Context, env control.Env, opts storage.Options) (*storage.DB, error) {
	if c.databaseURL != "" {
		db, err := storage.OpenPostgres(ctx, c.databaseURL, string(env), opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", env, err)
		}
		return db, nil
	}
	file := filepath.Join(c.dataDir, environmentDB(env))
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return nil, fmt.Errorf("%s data folder: %w", env, err)
	}
	db, err := storage.Open(ctx, file, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", env, err)
	}
	return db, nil
}

// openMedia opens the media of env: <dataDir>/<env>/media, or the prefix
// PREFIX/<env>/ of the bucket.
func (c storeConfig) openMedia(ctx context.Context, env control.Env) (storage.Media, error) {
	var (
		m   storage.Media
		err error
	)
	if c.mediaURL != "" {
		m, err = storage.OpenS3Media(ctx, c.mediaURL, string(env))
	} else {
		m, err = storage.NewMediaDir(filepath.Join(c.dataDir, string(env), "media"))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", env, err)
	}
	return m, nil
}

// openEnvironment opens one environment's database and media, and its
// control plane over them, run with opts.
func openEnvironment(ctx context.Context, c storeConfig, env control.Env, loc *time.Location, instance string, opts ...control.ServiceOption) (*control.Service, *storage.DB, error) {
	media, err := c.openMedia(ctx, env)
	if err != nil {
		return nil, nil, err
	}
	db, err := c.openDatabase(ctx, env, storage.Options{Location: loc, Instance: instance})
	if err != nil {
		return nil, nil, err
	}
	return control.NewService(env, db, media, opts...), db, nil
}
