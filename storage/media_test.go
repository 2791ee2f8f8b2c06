package storage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/minio/minio-go/v7"
	"github.com/pulsewire/pulsewire/storage/storagetest"
)

// The media tests run on both kinds of media: a folder, and a bucket of a
// real S3-compatible server (versitygw), started once for the package when
// the first test needs it.
var s3 struct {
	once   sync.Once
	server *storagetest.S3
	err    error
}

func stopS3() {
	if s3.server != nil {
		s3.server.Stop()
	}
}

// mediaKinds runs test on a fresh media folder and on a fresh prefix of the
// bucket; check, when not nil, looks behind the Media at what is stored.
func mediaKinds(t *testing.T, test func(t *testing.T, m Media, raw *rawMedia)) {
	t.Run("folder", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "media")
		m, err := NewMediaDir(root)
		if err != nil {
			t.Fatal(err)
		}
		test(t, m, &rawMedia{folder: root})
	})
	t.Run("s3", func(t *testing.T) {
		s3.once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
			defer cancel()
			s3.server, s3.err = storagetest.StartS3(ctx)
		})
		if s3.err != nil {
			storagetest.Unavailable(t, "S3-compatible server", s3.err)
		}
		t.Setenv("AWS_ACCESS_KEY_ID", s3.server.AccessKey)
		t.Setenv("AWS_SECRET_ACCESS_KEY", s3.server.SecretKey)
		// One server serves every run of the package (go test -count=N):
		// the random part keeps each run's prefix its own.
		prefix := "media-" + strings.ReplaceAll(t.Name(), "/", "-") + "-" + uuid.NewString()[:8]
		m, err := OpenS3Media(context.Background(), s3.server.URL(prefix), "production")
		if err != nil {
			t.Fatal(err)
		}
		client, err := s3.server.Client()
		if err != nil {
			t.Fatal(err)
		}
		test(t, m, &rawMedia{s3: client, bucket: s3.server.Bucket, prefix: prefix + "/production/"})
	})
}

// rawMedia reads what a Media stored, around it.
type rawMedia struct {
	folder string
	s3     *minio.Client
	bucket string
	prefix string
}

// names lists every file or object the media hold, temporary ones and
// unfinished uploads included.
func (r *rawMedia) names(t *testing.T) []string {
	t.Helper()
	var names []string
	if r.folder != "" {
		filepath.WalkDir(r.folder, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(r.folder, p)
				names = append(names, filepath.ToSlash(rel))
			}
			return nil
		})
		return names
	}
	ctx := context.Background()
	for o := range r.s3.ListObjects(ctx, r.bucket, minio.ListObjectsOptions{Prefix: r.prefix, Recursive: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		names = append(names, strings.TrimPrefix(o.Key, r.prefix))
	}
	for u := range r.s3.ListIncompleteUploads(ctx, r.bucket, r.prefix, true) {
		if u.Err == nil {
			names = append(names, "unfinished:"+strings.TrimPrefix(u.Key, r.prefix))
		}
	}
	return names
}

func readAll(t *testing.T, m Media, id, name string) []byte {
	t.Helper()
	rc, err := m.Open(context.Background(), id, name)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMedia(t *testing.T) {
	mediaKinds(t, func(t *testing.T, m Media, raw *rawMedia) {
		ctx := context.Background()
		id := uuid.NewString()
		if err := m.Put(ctx, id, "video.mp4", strings.NewReader("frames")); err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, m, id, "video.mp4"); string(got) != "frames" {
			t.Fatalf("read back %q", got)
		}
		// A second put of a name replaces it.
		if err := m.Put(ctx, id, "video.mp4", strings.NewReader("more frames")); err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, m, id, "video.mp4"); string(got) != "more frames" {
			t.Fatalf("after a replacement: %q", got)
		}
		if _, err := m.Open(ctx, id, "missing"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("open of a missing file: %v", err)
		}

		// A reader that fails leaves nothing: neither a small file sent in
		// one request, nor a large one part-way through its upload.
		for _, size := range []int{10, 3 * partSize / 2} {
			r := io.MultiReader(io.LimitReader(zeros{}, int64(size)), failingReader{})
			if err := m.Put(ctx, id, "broken.bin", r); err == nil {
				t.Fatalf("a failed copy of %d bytes was reported stored", size)
			}
		}
		if names := raw.names(t); !slices.Equal(names, []string{id + "/video.mp4"}) {
			t.Fatalf("stored after failed puts: %v", names)
		}
		// A failed first put leaves no measure with files to List.
		other := uuid.NewString()
		if err := m.Put(ctx, other, "broken.bin", failingReader{}); err == nil {
			t.Fatal("a failed copy was reported stored")
		}
		if listed, err := m.List(ctx); err != nil || len(listed) != 1 || listed[0].ID != id {
			t.Fatalf("listed after a failed first put: %v, %v", listed, err)
		}

		for _, tc := range []struct{ name, id, file string }{
			{"parent folder", id, ".."},
			{"hidden", id, ".secret"},
			{"nested", id, "a/b"},
			{"non-canonical id", strings.ToUpper(id), "x"},
			{"id escaping the root", "../../etc", "x"},
		} {
			if err := m.Put(ctx, tc.id, tc.file, strings.NewReader("x")); err == nil {
				t.Errorf("%s: put %q/%q accepted", tc.name, tc.id, tc.file)
			}
		}

		for range 2 { // twice: removing what is gone is no error
			if err := m.Remove(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := m.Open(ctx, id, "video.mp4"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("open after remove: %v", err)
		}
		if names := raw.names(t); len(names) != 0 {
			t.Fatalf("left after remove: %v", names)
		}
	})
}

// TestMediaStreamsLargeFiles: a file of a video's size streams through in
// parts (the object store's multipart upload), and reads back whole.
func TestMediaStreamsLargeFiles(t *testing.T) {
	mediaKinds(t, func(t *testing.T, m Media, raw *rawMedia) {
		ctx := context.Background()
		id := uuid.NewString()
		const size = 40 << 20 // five parts
		sum := sha256.New()
		src := io.TeeReader(io.LimitReader(randomBytes{rand.NewChaCha8([32]byte{1})}, size), sum)
		if err := m.Put(ctx, id, "video", src); err != nil {
			t.Fatal(err)
		}
		rc, err := m.Open(ctx, id, "video")
		if err != nil {
			t.Fatal(err)
		}
		back := sha256.New()
		n, err := io.Copy(back, rc)
		rc.Close()
		if err != nil || n != size || !bytes.Equal(back.Sum(nil), sum.Sum(nil)) {
			t.Fatalf("read back %d bytes (%v), want %d equal ones", n, err, size)
		}
		if raw.s3 != nil {
			info, err := raw.s3.StatObject(ctx, raw.bucket, raw.prefix+id+"/video", minio.StatObjectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// A multipart object's ETag ends in -<parts>.
			if want := fmt.Sprintf("-%d", size/partSize); !strings.HasSuffix(strings.Trim(info.ETag, `"`), want) {
				t.Fatalf("ETag %s: not a multipart upload of %d parts", info.ETag, size/partSize)
			}
		}
	})
}

func TestMediaList(t *testing.T) {
	mediaKinds(t, func(t *testing.T, m Media, raw *rawMedia) {
		ctx := context.Background()
		before := time.Now().Add(-2 * time.Second) // object stores keep whole seconds
		var want []string
		for i := range 3 {
			id := uuid.NewString()
			want = append(want, id)
			for _, name := range []string{"a", "b"} {
				if err := m.Put(ctx, id, name, strings.NewReader(fmt.Sprint(i))); err != nil {
					t.Fatal(err)
				}
			}
		}
		// Things that are not a measure's media are not listed.
		if raw.folder != "" {
			os.WriteFile(filepath.Join(raw.folder, uuid.NewString()), nil, 0o600)
			os.Mkdir(filepath.Join(raw.folder, "lost+found"), 0o700)
		} else {
			for _, key := range []string{"stray", "not-a-uuid/x", uuid.NewString()} {
				if _, err := raw.s3.PutObject(ctx, raw.bucket, raw.prefix+key, strings.NewReader("x"), 1, minio.PutObjectOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		got, err := m.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, s := range got {
			ids = append(ids, s.ID)
			if s.Modified.Before(before) || s.Modified.After(time.Now().Add(2*time.Second)) {
				t.Errorf("%s modified at %s, not about now", s.ID, s.Modified)
			}
		}
		slices.Sort(ids)
		slices.Sort(want)
		if !slices.Equal(ids, want) {
			t.Fatalf("listed %v, want %v", ids, want)
		}
	})
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// randomBytes reads a seeded stream, so that a part of one file cannot
// pass for another.
type randomBytes struct{ r *rand.ChaCha8 }

func (r randomBytes) Read(p []byte) (int, error) { return r.r.Read(p) }
