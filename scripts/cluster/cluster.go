package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/template"
	"time"

	"github.com/pulsewire/pulsewire/storage/storagetest"
)

// cluster is PulseWire as a company runs it on several machines, on
// loopback: a PostgreSQL cluster, an S3-compatible object store, N
// instances of `pulsewire serve` sharing both, and HAProxy in front of
// them, round robin, with each environment on its own frontend.
type cluster struct {
	pg        *storagetest.Postgres
	s3        *storagetest.S3
	instances []*instance
	proxy     *exec.Cmd
	proxyDone chan error
	dir       string
	bin       string
	// prod and test are the proxy's base URLs.
	prod, test string
}

// clusterOptions configure a cluster.
type clusterOptions struct {
	instances int
	bin       string        // the pulsewire binary
	runLimit  time.Duration // serve --run-limit; 0: its default
	durable   bool          // PostgreSQL flushes every commit, as in production
}

// instance is one `pulsewire serve` of the cluster.
type instance struct {
	cmd        *exec.Cmd
	out        *syncBuffer // its log
	done       chan error
	prod, test string // host:port of its listeners
}

type syncBuffer struct {
	mu sync.Mutex // protects b
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startCluster starts everything, each piece on free loopback ports, in a
// temporary folder that stop removes.
func startCluster(ctx context.Context, opts clusterOptions) (c *cluster, err error) {
	c = &cluster{bin: opts.bin}
	defer func() {
		if err != nil {
			c.stop()
		}
	}()
	if c.dir, err = os.MkdirTemp("", "pulsewire-cluster-"); err != nil {
		return c, err
	}
	if c.pg, err = storagetest.StartPostgres(ctx, storagetest.PostgresOptions{Durable: opts.durable}); err != nil {
		return c, fmt.Errorf("postgres: %w", err)
	}
	if c.s3, err = storagetest.StartS3(ctx); err != nil {
		return c, fmt.Errorf("object store: %w", err)
	}
	// Started one after the other: the first migrates, the others find
	// the schemas up to date (starting them together is safe too).
	for range opts.instances {
		in, err := c.startInstance(opts)
		if err != nil {
			return c, err
		}
		c.instances = append(c.instances, in)
	}
	return c, c.startProxy()
}

// databaseURL and mediaURL are what every instance and client command is
// given.
func (c *cluster) databaseURL() string { return c.pg.URL }
func (c *cluster) mediaURL() string    { return c.s3.URL("pulsewire") }

// env is the environment of a pulsewire process of the cluster: the
// object store's credentials, in the variables AWS tools read.
func (c *cluster) env() []string { return append(os.Environ(), c.s3.Env()...) }

func (c *cluster) startInstance(opts clusterOptions) (*instance, error) {
	args := []string{"serve", "--log-format", "json", "--addr", "127.0.0.1:0", "--test-addr", "127.0.0.1:0",
		"--database-url", c.databaseURL(), "--media-url", c.mediaURL(), "--data-dir", filepath.Join(c.dir, "data")}
	if opts.runLimit > 0 {
		args = append(args, "--run-limit", opts.runLimit.String())
	}
	in := &instance{out: &syncBuffer{}, done: make(chan error, 1)}
	in.cmd = exec.Command(c.bin, args...)
	in.cmd.Env = c.env()
	in.cmd.Stderr = in.out
	in.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := in.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { in.done <- in.cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for in.prod == "" || in.test == "" {
		select {
		case err := <-in.done:
			in.done <- err
			return nil, fmt.Errorf("instance exited: %v\n%s", err, in.out)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("instance did not listen in time:\n%s", in.out)
		}
		sc := bufio.NewScanner(strings.NewReader(in.out.String()))
		for sc.Scan() {
			var line struct{ Msg, Env, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" {
				if line.Env == "production" {
					in.prod = line.Addr
				} else {
					in.test = line.Addr
				}
			}
		}
	}
	return in, nil
}

// proxyConfig is HAProxy's: round robin over the instances, a health check
// of each every second (a dead instance is out after two), a request that
// cannot connect retried on another, and no time limit on an upgraded
// WebSocket beyond an hour of silence.
var proxyConfig = template.Must(template.New("haproxy").Parse(`global
  maxconn 2000
defaults
  mode http
  timeout connect 2s
  timeout client 120s
  timeout server 120s
  timeout tunnel 1h
  retries 3
  option redispatch
{{range .Envs}}
frontend {{.Name}}
  bind 127.0.0.1:{{.Port}}
  default_backend {{.Name}}_instances
backend {{.Name}}_instances
  balance roundrobin
  option httpchk GET /openapi.json
  default-server check inter 1s fall 2 rise 1
{{range $i, $a := .Servers}}  server i{{$i}} {{$a}}
{{end}}{{end}}`))

func (c *cluster) startProxy() error {
	type env struct {
		Name    string
		Port    int
		Servers []string
	}
	var envs []env
	for _, name := range []string{"production", "test"} {
		port, err := freePort()
		if err != nil {
			return err
		}
		e := env{Name: name, Port: port}
		for _, in := range c.instances {
			e.Servers = append(e.Servers, map[bool]string{true: in.prod, false: in.test}[name == "production"])
		}
		envs = append(envs, e)
	}
	var cfg bytes.Buffer
	if err := proxyConfig.Execute(&cfg, struct{ Envs []env }{envs}); err != nil {
		return err
	}
	file := filepath.Join(c.dir, "haproxy.cfg")
	if err := os.WriteFile(file, cfg.Bytes(), 0o600); err != nil {
		return err
	}
	out := &syncBuffer{}
	c.proxy = exec.Command("haproxy", "-f", file, "-db")
	c.proxy.Stdout, c.proxy.Stderr = out, out
	c.proxy.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := c.proxy.Start(); err != nil {
		return fmt.Errorf("haproxy (scripts/install-deps.sh test installs it): %w", err)
	}
	c.proxyDone = make(chan error, 1)
	go func() { c.proxyDone <- c.proxy.Wait() }()
	c.prod = "http://127.0.0.1:" + strconv.Itoa(envs[0].Port)
	c.test = "http://127.0.0.1:" + strconv.Itoa(envs[1].Port)
	// Ready when every instance is up behind both frontends: a few
	// requests reach each.
	for deadline := time.Now().Add(20 * time.Second); ; {
		if c.proxyReady() {
			return nil
		}
		select {
		case err := <-c.proxyDone:
			c.proxyDone <- err
			return fmt.Errorf("haproxy exited: %v\n%s", err, out)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("haproxy not ready:\n%s", out)
		}
	}
}

func (c *cluster) proxyReady() bool {
	for _, base := range []string{c.prod, c.test} {
		for range 2 * len(c.instances) {
			resp, err := httpClient.Get(base + "/openapi.json")
			if err != nil {
				return false
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				return false
			}
		}
	}
	return true
}

// kill ends instance i with SIGKILL: nothing of it runs after.
func (c *cluster) kill(i int) {
	in := c.instances[i]
	in.cmd.Process.Kill()
	err := <-in.done
	in.done <- err
}

// stop stops everything and removes the folder.
func (c *cluster) stop() {
	if c.proxy != nil && c.proxy.Process != nil {
		c.proxy.Process.Signal(syscall.SIGTERM)
		<-c.proxyDone
	}
	for _, in := range c.instances {
		select {
		case err := <-in.done: // already gone
			in.done <- err
			continue
		default:
		}
		in.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-in.done:
		case <-time.After(20 * time.Second):
			in.cmd.Process.Kill()
			<-in.done
		}
	}
	if c.s3 != nil {
		c.s3.Stop()
	}
	if c.pg != nil {
		c.pg.Stop()
	}
	if c.dir != "" {
		os.RemoveAll(c.dir)
	}
}

// cli runs `pulsewire client ...` on the cluster's database and returns
// its output.
func (c *cluster) cli(args ...string) ([]byte, error) {
	cmd := exec.Command(c.bin, append(args, "--database-url", c.databaseURL())...)
	cmd.Env = c.env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("pulsewire %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

// createClient creates a client of env with the command line and returns
// its id and API key.
func (c *cluster) createClient(env, name string, flags ...string) (id, key string, err error) {
	out, err := c.cli(append([]string{"client", "create", "--env", env, "--name", name}, flags...)...)
	if err != nil {
		return "", "", err
	}
	var v struct{ ID, APIKey string }
	if err := json.Unmarshal(out, &v); err != nil || v.APIKey == "" {
		return "", "", fmt.Errorf("client create printed %q", out)
	}
	return v.ID, v.APIKey, nil
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

// buildBinary returns $PULSEWIRE_BINARY, or builds the binary from the
// module's cmd/pulsewire into dir.
func buildBinary(dir string) (string, error) {
	if p := os.Getenv("PULSEWIRE_BINARY"); p != "" {
		return p, nil
	}
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "pulsewire")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/pulsewire")
	cmd.Dir = strings.TrimSpace(string(root))
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", errors.Join(err, errors.New(string(out)))
	}
	return bin, nil
}
