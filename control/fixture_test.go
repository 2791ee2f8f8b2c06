package control

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"image"
	"image/jpeg"
	"io"
	"math"
	"math/rand/v2"
	"mime/multipart"
	"net/http/httptest"
	"net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pulsewire/pulsewire/scripts/synth/clip"
)

// fixtureDir is a folder for the media the tests of this package share,
// generated once per run; TestMain removes it.
var fixtureDir = sync.OnceValues(func() (string, error) { return os.MkdirTemp("", "pulsewire-control-") })

// fixture is the path of a shared media file.
func fixture(name string) (string, error) {
	dir, err := fixtureDir()
	return filepath.Join(dir, name), err
}

// removeFixtures removes the shared media, if any were made.
func removeFixtures() {
	if dir, err := fixtureDir(); err == nil {
		os.RemoveAll(dir)
	}
}

// faceClip is a synthetic face video with a known heart rate (its truth
// beside it): 12 s of 320x240 at 30 fps, H.264 at CRF 18, a 1.2% pulse
// (strong, so that a short, small clip keeps it through the encoder; the
// accuracy benchmark covers weaker ones). The synth command draws it, built
// without the race detector: drawing the frames in this test binary takes
// several times longer under -race.
var faceClip = sync.OnceValues(func() (string, error) {
	return synth("face.mp4", "-size", "320x240", "-seconds", "12", "-hr", "84", "-seed", "3", "-amplitude", "0.012", "-crf", "18")
})

// synth writes a shared clip with the synth command and its flags, once
// per name.
func synth(name string, flags ...string) (string, error) {
	path, err := fixture(name)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	out, err := exec.Command("go", append([]string{"run", "../scripts/synth", "-o", path}, flags...)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("synth: %v: %s", err, out)
	}
	return path, nil
}

// faceVideoBytes is the content of faceVideo's clip.
func faceVideoBytes(t *testing.T) []byte {
	t.Helper()
	path, _ := faceVideo(t)
	video, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return video
}

// faceVideo returns faceClip's file and ground truth.
func faceVideo(t *testing.T) (string, clip.Truth) {
	t.Helper()
	path, err := faceClip()
	if err != nil {
		t.Fatal(err)
	}
	truth, err := clip.ReadTruth(clip.TruthPath(path))
	if err != nil {
		t.Fatal(err)
	}
	return path, truth
}

// lavfiCodecs are the encoders of lavfi's videos, by the container the
// file name's extension names.
var lavfiCodecs = map[string][]string{
	".mp4":  {"-c:v", "libx264", "-pix_fmt", "yuv420p", "-movflags", "+faststart"},
	".mov":  {"-c:v", "libx264", "-pix_fmt", "yuv420p"},
	".webm": {"-c:v", "libvpx", "-b:v", "1M"},
	".avi":  {"-c:v", "mjpeg", "-q:v", "2"},
}

// lavfi makes a small video of a plain grey picture with ffmpeg's test
// source: seconds long at 15 fps, 64x64, in the container of name's
// extension (lavfiCodecs). An mp4 is H.264 with faststart, so the index
// comes first and padding can follow.
func lavfi(t *testing.T, name string, seconds float64) string {
	t.Helper()
	path, err := fixture(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err == nil {
		return path
	}
	ext := filepath.Ext(name)
	codec, ok := lavfiCodecs[ext]
	if !ok {
		t.Fatalf("lavfi: no encoder for %q", name)
	}
	tmp := path + ".tmp" + ext
	args := []string{"-nostdin", "-hide_banner", "-loglevel", "error", "-f", "lavfi",
		"-i", fmt.Sprintf("color=c=gray:s=64x64:r=15:d=%g", seconds)}
	out, err := exec.Command("ffmpeg", append(append(args, codec...), "-y", tmp)...).CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, out)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// padded returns the bytes of the mp4 at path grown to exactly size with a
// trailing free box, which demuxers skip: a valid video of any size.
func padded(t *testing.T, path string, size int64) io.Reader {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pad := size - int64(len(data))
	if pad < 8 {
		t.Fatalf("cannot pad %d bytes to %d", len(data), size)
	}
	var box [8]byte
	binary.BigEndian.PutUint32(box[:4], uint32(pad))
	copy(box[4:], "free")
	return io.MultiReader(bytes.NewReader(data), bytes.NewReader(box[:]), io.LimitReader(zeros{}, pad-8))
}

// zeros reads zero bytes forever.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// facePhoto is the JPEG of the synthetic clips' face (320x400).
func facePhoto(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("../scripts/synth/clip/photo/face.jpg")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// sideways is a JPEG as a phone stores a portrait photo: the picture of
// jpg turned a quarter anticlockwise, with EXIF orientation 6 telling a
// viewer to turn it back clockwise.
func sideways(t *testing.T, jpg []byte) []byte {
	t.Helper()
	img, err := jpeg.Decode(bytes.NewReader(jpg))
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	turned := image.NewRGBA(image.Rect(0, 0, b.Dy(), b.Dx()))
	for y := range b.Dy() {
		for x := range b.Dx() {
			turned.Set(y, b.Dx()-1-x, img.At(b.Min.X+x, b.Min.Y+y))
		}
	}
	var out bytes.Buffer
	if err := jpeg.Encode(&out, turned, &jpeg.Options{Quality: 92}); err != nil {
		t.Fatal(err)
	}
	// APP1: "Exif", a big-endian TIFF header, one directory of one entry:
	// tag 0x0112 (orientation), one SHORT, 6.
	const exif = "\xFF\xE1\x00\x22Exif\x00\x00MM\x00\x2A\x00\x00\x00\x08" +
		"\x00\x01\x01\x12\x00\x03\x00\x00\x00\x01\x00\x06\x00\x00\x00\x00\x00\x00"
	return append(append(out.Bytes()[:2:2], exif...), out.Bytes()[2:]...)
}

// grey is a small JPEG of a plain picture, under 4 KB.
func grey(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(100 + i%7)
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 80}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// padTo grows data to exactly size with zero bytes after its end, which
// image decoders do not read.
func padTo(t *testing.T, data []byte, size int) []byte {
	t.Helper()
	if len(data) > size {
		t.Fatalf("%d bytes are more than %d", len(data), size)
	}
	return append(data[:len(data):len(data)], make([]byte, size-len(data))...)
}

// pngHeader is the start of a PNG file that declares w x h pixels of RGB:
// signature and IHDR chunk, its checksum right.
func pngHeader(w, h uint32) []byte {
	chunk := binary.BigEndian.AppendUint32([]byte("IHDR"), w)
	chunk = binary.BigEndian.AppendUint32(chunk, h)
	chunk = append(chunk, 8, 2, 0, 0, 0) // 8-bit RGB, no interlace
	b := append([]byte("\x89PNG\r\n\x1a\n"), 0, 0, 0, 13)
	b = append(b, chunk...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(chunk))
}

// clipFrames encodes the first n frames of a synthetic face clip as JPEG
// crops, with their capture times in ms.
func clipFrames(t *testing.T, n int) ([][]byte, []float64) {
	t.Helper()
	c, err := clip.New(clip.Config{Width: 96, Height: 96, Seconds: float64(n)/15 + 0.1, FPS: 15, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	var crops [][]byte
	var times []float64
	img := image.NewRGBA(image.Rect(0, 0, 96, 96))
	for i := range n {
		c.Render(i, img)
		var b bytes.Buffer
		if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
			t.Fatal(err)
		}
		crops = append(crops, b.Bytes())
		times = append(times, float64(c.Time(i).Microseconds())/1000)
	}
	return crops, times
}

// pulseSignal is a signal body with a pulse at hz: a camera trace at 30
// samples a second (r, g, b with the skin's per-channel strengths) or a
// contact one at 100 (values), with a little noise.
func pulseSignal(kind string, hz, seconds float64) map[string]any {
	rate := map[string]float64{"rppg": 30, "cppg": 100}[kind]
	n := int(seconds * rate)
	rng := rand.New(rand.NewPCG(7, 7))
	ts, r, g, b, v := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		ts[i] = math.Round(float64(i)*1000/rate*10) / 10
		p := math.Sin(2*math.Pi*hz*float64(i)/rate) + 0.05*rng.NormFloat64()
		r[i], g[i], b[i] = 180-0.3*p, 120-0.8*p, 90-0.5*p
		v[i] = 200 - 3*p
	}
	if kind == "cppg" {
		return map[string]any{"signal": map[string]any{"timestamps": ts, "values": v}}
	}
	return map[string]any{"signal": map[string]any{"timestamps": ts, "r": r, "g": g, "b": b}}
}

// child is a process this test process started.
type child struct {
	pid     int
	command string
}

// children lists the processes whose parent is this one, from /proc (the
// line of /proc/<pid>/stat reads "pid (command) state ppid ...").
func children() []child {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	self := strconv.Itoa(os.Getpid())
	var cs []child
	for _, s := range stats {
		b, err := os.ReadFile(s)
		if err != nil {
			continue // gone meanwhile
		}
		open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if open < 0 || end < open {
			continue
		}
		if f := strings.Fields(string(b[end+1:])); len(f) > 1 && f[1] == self {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b[:open])))
			cs = append(cs, child{pid: pid, command: string(b[open+1 : end])})
		}
	}
	return cs
}

// part is one part of a multipart body: a file part (with a file name, and
// a Content-Type when ctype is set) or a plain field.
type part struct {
	name, ctype string
	file        bool
	body        io.Reader
}

func field(name, value string) part { return part{name: name, body: bytes.NewReader([]byte(value))} }

func file(name, ctype string, data []byte) part {
	return part{name: name, ctype: ctype, file: true, body: bytes.NewReader(data)}
}

// upload sends parts as one multipart/form-data POST, streamed through a
// pipe as the server reads them; read is how many bytes the server took.
func (e *testEnv) upload(target, key string, parts ...part) (r response, read int64) {
	e.t.Helper()
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		var err error
		for i, p := range parts {
			h := textproto.MIMEHeader{}
			switch {
			case p.file:
				h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename="f%d"`, p.name, i))
				if p.ctype != "" {
					h.Set("Content-Type", p.ctype)
				}
			default:
				h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q`, p.name))
			}
			var w io.Writer
			if w, err = mw.CreatePart(h); err != nil {
				break
			}
			if _, err = io.Copy(w, p.body); err != nil {
				break
			}
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	body := &countingReader{r: pr}
	r = e.send(target, key, mw.FormDataContentType(), body)
	pr.Close() // the server may have stopped reading: release the writer
	return r, body.n.Load()
}

// send POSTs body with its content type.
func (e *testEnv) send(target, key, contentType string, body io.Reader) response {
	e.t.Helper()
	req := httptest.NewRequest("POST", target, body)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", contentType)
	w := httptest.NewRecorder()
	e.api.ServeHTTP(w, req)
	return response{w.Code, w.Header(), w.Body.Bytes()}
}

// sendJSON POSTs v as JSON.
func (e *testEnv) sendJSON(target, key string, v any) response {
	e.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.send(target, key, "application/json", bytes.NewReader(b))
}

type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// measureOf reads an answer's measure loosely.
type measureOf struct {
	ID                string   `json:"id"`
	Status            string   `json:"status"`
	StartedAt         *string  `json:"startedAt"`
	EndedAt           *string  `json:"endedAt"`
	ReturnedVariables []string `json:"returnedVariables"`
	Signal            *struct {
		QualityScore variableOf `json:"qualityScore"`
	} `json:"signal"`
	Variables map[string]variableOf `json:"variables"`
	MediaKept *bool                 `json:"mediaKept"`
}

type variableOf struct {
	Value json.RawMessage `json:"value"`
	Error *string         `json:"error"`
}

func (v variableOf) code() string {
	if v.Error == nil {
		return ""
	}
	return *v.Error
}

func (e *testEnv) measureOf(r response) measureOf {
	e.t.Helper()
	var m measureOf
	if err := json.Unmarshal(r.body, &m); err != nil {
		e.t.Fatalf("%s: %v", r.body, err)
	}
	return m
}

// mean reads the mean of hr, br or hrv; it fails the test on an error.
func (m measureOf) mean(t *testing.T, name string) float64 {
	t.Helper()
	v, ok := m.Variables[name]
	if !ok || v.Error != nil {
		t.Fatalf("%s: %+v (present %v)", name, v, ok)
	}
	var x struct{ Mean float64 }
	json.Unmarshal(v.Value, &x)
	return x.Mean
}

// mediaFolders lists the measure folders of the environment's media.
func (e *testEnv) mediaFolders() []string {
	e.t.Helper()
	stored, err := e.media.List(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	ids := make([]string, len(stored))
	for i, m := range stored {
		ids[i] = m.ID
	}
	return ids
}
