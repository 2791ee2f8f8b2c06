package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// VersitygwModule is the S3-compatible server the tests run: versitygw with
// its POSIX backend, pinned.
const VersitygwModule = "github.com/versity/versitygw/cmd/versitygw@v1.8.0"

// S3 is an S3-compatible server of its own (versitygw over a temporary
// folder) on loopback, with one bucket.
type S3 struct {
	Endpoint             string // http://127.0.0.1:port
	AccessKey, SecretKey string
	Bucket               string
	dir                  string
	cmd                  *exec.Cmd
	done                 chan error
	log                  *bytes.Buffer
}

// versitygw finds the server: $PULSEWIRE_VERSITYGW (what `make test` builds
// into bin/), versitygw on PATH, or else the pinned module through `go run`
// (its first build takes a few minutes).
func versitygw() []string {
	if p := os.Getenv("PULSEWIRE_VERSITYGW"); p != "" {
		return []string{p}
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return []string{p}
	}
	return []string{"go", "run", VersitygwModule}
}

// StartS3 starts versitygw in a temporary folder with a fresh bucket.
func StartS3(ctx context.Context) (*S3, error) {
	dir, err := os.MkdirTemp("", "pulsewire-s3-")
	if err != nil {
		return nil, err
	}
	s := &S3{dir: dir, AccessKey: "pulsewire", SecretKey: "pulsewire-secret", Bucket: "pulsewire", log: &bytes.Buffer{}}
	fail := func(err error) (*S3, error) {
		s.Stop()
		return nil, err
	}
	root, meta := filepath.Join(dir, "root"), filepath.Join(dir, "meta")
	for _, d := range []string{root, meta} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return fail(err)
		}
	}
	for attempt := 0; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return fail(err)
		}
		s.Endpoint = "http://127.0.0.1:" + strconv.Itoa(port)
		cmd := versitygw()
		// Metadata in a side folder: the temporary folder's file system
		// may not keep extended attributes.
		cmd = append(cmd, "--access", s.AccessKey, "--secret", s.SecretKey, "--port", "127.0.0.1:"+strconv.Itoa(port),
			"--quiet", "posix", "--sidecar", meta, root)
		s.cmd = exec.Command(cmd[0], cmd[1:]...)
		s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
		s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
		s.done = make(chan error, 1)
		if err := s.cmd.Start(); err != nil {
			return fail(fmt.Errorf("start versitygw: %w", err))
		}
		go func() { s.done <- s.cmd.Wait() }()
		err = s.waitReady(ctx)
		if err == nil {
			break
		}
		s.kill()
		if attempt == 2 || !strings.Contains(s.log.String(), "address already in use") {
			return fail(fmt.Errorf("%w: %s", err, s.log))
		}
		s.log.Reset()
	}
	client, err := s.Client()
	if err != nil {
		return fail(err)
	}
	if err := client.MakeBucket(ctx, s.Bucket, minio.MakeBucketOptions{}); err != nil {
		return fail(fmt.Errorf("make bucket: %w", err))
	}
	return s, nil
}

// waitReady waits until the server lists its buckets, or exits. A `go run`
// first builds the server: the wait allows for it.
func (s *S3) waitReady(ctx context.Context) error {
	client, err := s.Client()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		if c, err := net.DialTimeout("tcp", strings.TrimPrefix(s.Endpoint, "http://"), time.Second); err == nil {
			c.Close()
			lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			_, err = client.ListBuckets(lctx)
			cancel()
			if err == nil {
				return nil
			}
		}
		select {
		case werr := <-s.done:
			s.done <- werr
			return fmt.Errorf("versitygw exited: %v", werr)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("versitygw not ready after 5 minutes")
		}
	}
}

// Client is a client of the server, for a test to look at what is stored.
func (s *S3) Client() (*minio.Client, error) {
	return minio.New(strings.TrimPrefix(s.Endpoint, "http://"), &minio.Options{
		Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), BucketLookup: minio.BucketLookupPath,
	})
}

// URL is the media URL of the bucket under prefix, as `pulsewire serve
// --media-url` takes it.
func (s *S3) URL(prefix string) string {
	return "s3://" + s.Bucket + "/" + prefix + "?endpoint=" + s.Endpoint + "&region=us-east-1"
}

// Env is the environment a process needs to reach the bucket: the
// credentials, in the variables every AWS tool reads.
func (s *S3) Env() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + s.AccessKey, "AWS_SECRET_ACCESS_KEY=" + s.SecretKey}
}

// kill ends the server process (and, through its process group, a `go
// run` child).
func (s *S3) kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.done
	s.cmd = nil
}

// Stop stops the server and removes its folder.
func (s *S3) Stop() error {
	s.kill()
	return os.RemoveAll(s.dir)
}
