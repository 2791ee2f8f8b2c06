package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3Media is Media in a bucket of an S3-compatible object store (Amazon S3,
// MinIO, Ceph, versitygw...): file name of measure id is the object
// <prefix><id>/<name>. Instances of the server on several machines share
// it; nothing of it is held on a machine's disk.
type S3Media struct {
	client   *minio.Client
	bucket   string
	endpoint string // the store's host, for messages
	prefix   string // ends with "/", or is empty
}

// S3 upload sizes. An object up to smallObject bytes is sent in one PUT
// from memory; a larger one streams as a multipart upload of partSize
// parts, one part in memory at a time, so a 100 MB video costs 8 MiB.
const (
	smallObject = 1 << 20
	partSize    = 8 << 20 // S3 parts are at least 5 MiB, but for the last
)

// A store that takes connections and never answers must not hold a
// request for ever: each request to it waits at most storeAnswer for the
// first bytes of its answer and is tried storeAttempts times in all, and
// an operation on a measure's few objects (a small put, a removal) ends
// after storeOperation whatever its requests do. A large put has no such
// bound: it streams as fast as its client sends.
const (
	storeConnect   = 10 * time.Second
	storeAnswer    = 20 * time.Second
	storeAttempts  = 3
	storeOperation = time.Minute
)

// CheckS3URL says what is wrong with rawURL as a media URL OpenS3Media
// takes, without reaching the store; nil when nothing is.
func CheckS3URL(rawURL string) error {
	_, _, _, err := parseS3URL(rawURL)
	return err
}

// parseS3URL reads a media URL: the bucket and prefix (u), the store's
// host and the client's options.
func parseS3URL(rawURL string) (u *url.URL, endpoint string, opts *minio.Options, err error) {
	u, err = url.Parse(rawURL)
	if err != nil || u.Scheme != "s3" || u.Host == "" {
		return nil, "", nil, fmt.Errorf("want s3://BUCKET/PREFIX?endpoint=URL&region=R")
	}
	q := u.Query()
	for k := range q {
		if k != "endpoint" && k != "region" {
			return nil, "", nil, fmt.Errorf("unknown parameter %q (endpoint and region are known)", k)
		}
	}
	opts = &minio.Options{Creds: credentials.NewEnvAWS(), Region: q.Get("region"), Secure: true}
	endpoint = "s3.amazonaws.com"
	if e := q.Get("endpoint"); e != "" {
		eu, err := url.Parse(e)
		if err != nil || (eu.Scheme != "http" && eu.Scheme != "https") || eu.Host == "" || strings.Trim(eu.Path, "/") != "" {
			return nil, "", nil, fmt.Errorf("endpoint %q must be http://host:port or https://host:port", e)
		}
		endpoint, opts.Secure, opts.BucketLookup = eu.Host, eu.Scheme == "https", minio.BucketLookupPath
	}
	return u, endpoint, opts, nil
}

// OpenS3Media opens the media at a URL s3://BUCKET/PREFIX?endpoint=URL&region=R,
// under PREFIX/sub/ (sub names the environment), and checks that the bucket
// can be reached. With an endpoint (http://host:port, or https://) the
// bucket is addressed by path, as most S3-compatible servers want; without
// one it is Amazon S3. Credentials come from AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, as for every AWS tool.
func OpenS3Media(ctx context.Context, rawURL, sub string) (*S3Media, error) {
	u, endpoint, opts, err := parseS3URL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("media URL: %w", err)
	}
	tr, err := minio.DefaultTransport(opts.Secure)
	if err != nil {
		return nil, fmt.Errorf("media: %w", err)
	}
	tr.DialContext = (&net.Dialer{Timeout: storeConnect, KeepAlive: 30 * time.Second}).DialContext
	tr.ResponseHeaderTimeout = storeAnswer
	opts.Transport, opts.MaxRetries = tr, storeAttempts
	client, err := minio.New(endpoint, opts)
	if err != nil {
		return nil, fmt.Errorf("media URL: %w", err)
	}
	prefix := strings.Trim(u.Path, "/")
	if sub != "" {
		prefix = strings.TrimPrefix(prefix+"/"+sub, "/")
	}
	if prefix != "" {
		prefix += "/"
	}
	m := &S3Media{client: client, bucket: u.Host, endpoint: endpoint, prefix: prefix}
	if err := m.Check(ctx); err != nil {
		return nil, err
	}
	return m, nil
}

// Check reports whether the bucket answers.
func (m *S3Media) Check(ctx context.Context) error {
	ok, err := m.client.BucketExists(ctx, m.bucket)
	switch {
	case err != nil:
		return fmt.Errorf("media: bucket %s at %s: %w", m.bucket, m.endpoint, err)
	case !ok:
		return fmt.Errorf("media: bucket %s does not exist at %s", m.bucket, m.endpoint)
	}
	return nil
}

func (m *S3Media) key(id, name string) (string, error) {
	if err := checkMediaFile(id, name); err != nil {
		return "", err
	}
	return m.prefix + id + "/" + name, nil
}

// Put sends a small file in one request and streams a larger one as a
// multipart upload; an upload that fails is aborted, and the object
// appears only once complete.
func (m *S3Media) Put(ctx context.Context, id, name string, r io.Reader) error {
	key, err := m.key(id, name)
	if err != nil {
		return err
	}
	var head bytes.Buffer
	if _, err := io.CopyN(&head, r, smallObject+1); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("media put %s/%s: %w", id, name, err)
	}
	opts := minio.PutObjectOptions{ContentType: "application/octet-stream", PartSize: partSize}
	if head.Len() <= smallObject {
		ctx, cancel := context.WithTimeout(ctx, storeOperation)
		defer cancel()
		_, err = m.client.PutObject(ctx, m.bucket, key, &head, int64(head.Len()), opts)
	} else {
		_, err = m.client.PutObject(ctx, m.bucket, key, io.MultiReader(&head, contextReader{ctx, r}), -1, opts)
	}
	if err != nil {
		return fmt.Errorf("media put %s/%s: %w", id, name, err)
	}
	return nil
}

// Open returns the object as it streams from the store.
func (m *S3Media) Open(ctx context.Context, id, name string) (io.ReadCloser, error) {
	key, err := m.key(id, name)
	if err != nil {
		return nil, err
	}
	obj, err := m.client.GetObject(ctx, m.bucket, key, minio.GetObjectOptions{})
	if err == nil {
		_, err = obj.Stat() // GetObject is lazy: this is the request
	}
	if isNoSuchKey(err) {
		obj.Close()
		return nil, ErrNotFound
	}
	if err != nil {
		if obj != nil {
			obj.Close()
		}
		return nil, fmt.Errorf("media open %s/%s: %w", id, name, err)
	}
	return obj, nil
}

func isNoSuchKey(err error) bool {
	if err == nil {
		return false
	}
	resp := minio.ToErrorResponse(err)
	return resp.Code == "NoSuchKey" || resp.StatusCode == http.StatusNotFound
}

// Remove deletes every object of measure id: a measure has a few (a
// video, up to three images, the captures, a signal), listed then deleted
// in one request.
func (m *S3Media) Remove(ctx context.Context, id string) error {
	if err := checkMediaID(id); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, storeOperation)
	defer cancel()
	var keys []minio.ObjectInfo
	for o := range m.client.ListObjects(ctx, m.bucket, minio.ListObjectsOptions{Prefix: m.prefix + id + "/", Recursive: true}) {
		if o.Err != nil {
			return fmt.Errorf("media remove %s: %w", id, o.Err)
		}
		keys = append(keys, o)
	}
	if len(keys) == 0 {
		return nil
	}
	queue := make(chan minio.ObjectInfo, len(keys))
	for _, k := range keys {
		queue <- k
	}
	close(queue)
	var err error
	for e := range m.client.RemoveObjects(ctx, m.bucket, queue, minio.RemoveObjectsOptions{}) {
		if e.Err != nil && !isNoSuchKey(e.Err) && err == nil {
			err = fmt.Errorf("media remove %s: %w", id, e.Err)
		}
	}
	return err
}

// List walks every object under the prefix; a key that is not
// <prefix><uuid>/<name> is not ours and is left alone.
func (m *S3Media) List(ctx context.Context) ([]StoredMedia, error) {
	byID := map[string]int{}
	var stored []StoredMedia
	for o := range m.client.ListObjects(ctx, m.bucket, minio.ListObjectsOptions{Prefix: m.prefix, Recursive: true}) {
		if o.Err != nil {
			return nil, fmt.Errorf("media list: %w", o.Err)
		}
		id, name, ok := strings.Cut(strings.TrimPrefix(o.Key, m.prefix), "/")
		if !ok || checkMediaFile(id, name) != nil {
			continue
		}
		i, seen := byID[id]
		if !seen {
			i = len(stored)
			byID[id] = i
			stored = append(stored, StoredMedia{ID: id})
		}
		if o.LastModified.After(stored[i].Modified) {
			stored[i].Modified = o.LastModified
		}
	}
	return stored, nil
}
