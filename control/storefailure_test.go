package control

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/pulsewire/pulsewire/storage"
)

// smallDisk mounts a 64 KiB tmpfs, a real file system that fills up, on
// a new folder. It needs root (as make test runs); without, the test is
// skipped.
func smallDisk(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a full disk is a small tmpfs this test mounts, which needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// noisePNG is a PNG of random pixels, which does not compress: about
// 3*w*h bytes.
func noisePNG(t *testing.T, w, h int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(rng.Uint32())
		if i%4 == 3 {
			img.Pix[i] = 255
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestFullDisk: with the media on a full file system, an upload that
// cannot be stored is the server's failure, not the client's: 507, the
// cause logged at ERROR, and nothing left behind, neither media nor
// measure.
func TestFullDisk(t *testing.T) {
	disk := smallDisk(t)
	e := newTestEnv(t, Production, withMedia(func(storage.Media) storage.Media { return &storage.MediaDir{Root: disk} }))
	_, key := e.client("acme")
	videoBytes := faceVideoBytes(t)
	signal, _ := json.Marshal(pulseSignal("rppg", 1.2, 300))
	picture := noisePNG(t, 200, 200)
	cases := []struct {
		name string
		send func() response
	}{
		{"video", func() response {
			r, _ := e.upload("/measures/rppg/video", key, file("video", "video/mp4", videoBytes))
			return r
		}},
		{"images", func() response {
			r, _ := e.upload("/measures/rppg/images", key, file("images", "image/png", picture), file("images", "image/png", picture))
			return r
		}},
		{"signal", func() response {
			return e.send("/measures/rppg/signal", key, "application/json", bytes.NewReader(signal))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(e.logs.String())
			r := tc.send()
			wantStatus(t, r, http.StatusInsufficientStorage)
			wantBody(t, r, `{"statusCode":507,"message":"Insufficient Storage"}`)
			logs := e.logs.String()[before:]
			if !strings.Contains(logs, `"level":"ERROR"`) || !strings.Contains(logs, "no space left on device") {
				t.Fatalf("the cause is not logged at ERROR:\n%s", logs)
			}
			if left, _ := os.ReadDir(disk); len(left) != 0 {
				t.Fatalf("left on the disk: %v", left)
			}
			if total := e.do("GET", "/measures", key, nil).json(t)["total"]; total != 0.0 {
				t.Fatalf("%v measures stored", total)
			}
		})
	}
	// What fits is stored as ever.
	small, _ := json.Marshal(pulseSignal("cppg", 1.2, 12))
	wantStatus(t, e.send("/measures/cppg/signal", key, "application/json", bytes.NewReader(small)), http.StatusCreated)
}
