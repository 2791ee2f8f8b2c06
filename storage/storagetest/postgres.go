// Package storagetest starts the real servers that the tests of a
// PulseWire deployment on several machines need: a throwaway PostgreSQL
// cluster and an S3-compatible object store (versitygw), each on a free
// loopback port in a temporary folder, stopped and removed by Stop. It is
// also what `make cluster` starts them with.
//
// Tests call Require: in `make test` (PULSEWIRE_REQUIRE_SERVERS=1) a server
// that cannot start fails the test; elsewhere it is skipped, saying why.
package storagetest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// Postgres is a PostgreSQL cluster of its own, listening on loopback only
// (no Unix socket), trusting every local connection.
type Postgres struct {
	// URL connects to its database postgres as the superuser pulsewire.
	URL  string
	Port int
	dir  string
	cmd  *exec.Cmd
	done chan error // the server's exit
	log  *bytes.Buffer
}

// PostgresOptions configure a cluster.
type PostgresOptions struct {
	// Durable keeps PostgreSQL's default of flushing every commit to disk.
	// Tests leave it off (a throwaway cluster need not survive a power
	// cut), benchmarks and `make cluster` turn it on.
	Durable bool
	// MaxConnections is the server's connection limit; 0 means 200.
	MaxConnections int
}

// pgBinDir finds the folder of initdb and postgres: Debian keeps them in
// /usr/lib/postgresql/<version>/bin, out of PATH.
func pgBinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "postgres")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("PostgreSQL is not installed (scripts/install-deps.sh test installs it)")
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// StartPostgres makes a cluster with initdb in a temporary folder and starts
// it. PostgreSQL refuses to run as root: as root, the cluster belongs to
// the postgres user Debian's package creates (or nobody), and only its
// files are handed to that user.
func StartPostgres(ctx context.Context, opts PostgresOptions) (*Postgres, error) {
	bin, err := pgBinDir()
	if err != nil {
		return nil, err
	}
	cred, err := unprivileged()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pulsewire-postgres-")
	if err != nil {
		return nil, err
	}
	p := &Postgres{dir: dir, done: make(chan error, 1), log: &bytes.Buffer{}}
	fail := func(err error) (*Postgres, error) {
		p.Stop()
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fail(err)
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", "pulsewire", "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("initdb: %w: %s", err, out))
	}
	if opts.MaxConnections <= 0 {
		opts.MaxConnections = 200
	}
	args := []string{"-D", data, "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
		"-c", "max_connections=" + strconv.Itoa(opts.MaxConnections), "-c", "shared_buffers=128MB"}
	if !opts.Durable {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	// A port found free may be taken before the server binds it: try a
	// few.
	for attempt := 0; ; attempt++ {
		if p.Port, err = freePort(); err != nil {
			return fail(err)
		}
		p.cmd = exec.Command(filepath.Join(bin, "postgres"), append(args, "-p", strconv.Itoa(p.Port))...)
		p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
		// Pdeathsig: a test binary that dies takes its server along.
		p.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
		if err := p.cmd.Start(); err != nil {
			return fail(fmt.Errorf("start postgres: %w", err))
		}
		go func() { p.done <- p.cmd.Wait() }()
		p.URL = fmt.Sprintf("postgres://pulsewire@127.0.0.1:%d/postgres?sslmode=disable", p.Port)
		err = p.waitReady(ctx)
		if err == nil {
			return p, nil
		}
		p.cmd.Process.Kill()
		<-p.done
		p.done = make(chan error, 1)
		if attempt == 2 || !strings.Contains(p.log.String(), "could not bind") {
			return fail(fmt.Errorf("%w: %s", err, p.log))
		}
		p.log.Reset()
	}
}

// waitReady waits until the server accepts a query, or exits.
func (p *Postgres) waitReady(ctx context.Context) error {
	db, err := sql.Open("pgx", p.URL)
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		err := db.PingContext(pctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case werr := <-p.done:
			p.done <- werr
			return fmt.Errorf("postgres exited: %v", werr)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres not ready after 30 s: %w", err)
		}
	}
}

// Pid is the server's process id: its backends are its children.
func (p *Postgres) Pid() int { return p.cmd.Process.Pid }

// Exec runs statements on the cluster's database as the superuser.
func (p *Postgres) Exec(ctx context.Context, query string) error {
	db, err := sql.Open("pgx", p.URL)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, query)
	return err
}

// Stop stops the server (a fast shutdown: sessions are cut, nothing is
// flushed that need not be) and removes its folder.
func (p *Postgres) Stop() error {
	var err error
	if p.cmd != nil && p.cmd.Process != nil {
		p.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-p.done
		}
	}
	if p.dir != "" {
		err = os.RemoveAll(p.dir)
	}
	return err
}

// unprivileged is the credential a server that refuses root runs with, or
// nil when this process is not root.
func unprivileged() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
	}
	return nil, errors.New("running as root, and no postgres or nobody user to run PostgreSQL as")
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Required reports whether the servers must run: `make test` says so, and a
// server that cannot start then fails the test instead of skipping it.
func Required() bool { return os.Getenv("PULSEWIRE_REQUIRE_SERVERS") == "1" }

// Unavailable ends a test whose server could not start: a failure where the
// servers are required, a skip elsewhere.
func Unavailable(t testing.TB, what string, err error) {
	t.Helper()
	if Required() {
		t.Fatalf("%s: %v", what, err)
	}
	t.Skipf("%s unavailable (make test installs and requires it): %v", what, err)
}
