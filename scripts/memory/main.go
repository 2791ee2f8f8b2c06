// Command memory measures the memory a server needs whatever it is sent:
// it builds and starts `pulsewire serve` at its default limits, sends a
// sequence of worst-case inputs to both environments, and prints the peak
// resident memory of the whole process tree (the server and its ffmpeg and
// ffprobe children) during each, then the tree's memory after two minutes
// idle.
//
//	go run ./scripts/memory [-bin ./bin/pulsewire] [-idle 2m] [-only NAME,...]
//
// The inputs: unauthenticated WebSocket handshakes holding large
// unfinished first messages (1000 connections from 50 loopback
// addresses), stalled uploads on Test while Production measures, signal
// bodies of 99 MiB with 2 million tags and of the most samples allowed,
// an MP4 of 8192x8192 frames, PNG decompression bombs, three 30 MB images
// a request, 100 MB videos, 3,600 captures. Each is sent to both
// environments at once, several times over, so that every worker is busy.
// Targets: under 500 MiB at the peak, under 150 MiB idle after.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net"
	"net/http"
	"net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pulsewire/pulsewire/scripts/devserver"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.bin, "bin", "", "pulsewire binary (default: build one)")
	flag.DurationVar(&cfg.idle, "idle", 2*time.Minute, "how long the server idles before the last measure")
	flag.StringVar(&cfg.only, "only", "", "comma-separated names of the inputs to send (default all)")
	flag.Parse()
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "memory:", err)
		os.Exit(1)
	}
}

type config struct {
	bin, only string
	idle      time.Duration
}

// input is one worst case: send sends it to both environments and
// returns the answers' statuses, counted.
type input struct {
	name string
	send func(s *server, dir string) (map[int]int, error)
}

var inputs = []input{
	{"handshakes", handshakeFlood},
	{"stalled-uploads", stalledUploads},
	{"signal-tags", signalTags},
	{"signal-samples", signalSamples},
	{"video-pixels", videoPixels},
	{"png-bombs", pngBombs},
	{"images-30MB", bigImages},
	{"video-100MB", bigVideos},
	{"captures-3600", captures},
}

func run(cfg config) error {
	dir, bin, err := devserver.Prepare("memory", cfg.bin)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg.bin = bin
	s, err := startServer(cfg.bin, dir)
	if err != nil {
		return err
	}
	defer s.stop()
	tree := &sampler{root: s.cmd.Process.Pid}
	go tree.run(50 * time.Millisecond)
	defer tree.stop()

	time.Sleep(time.Second)
	fmt.Printf("%-16s %8s %10s  %s\n", "input", "seconds", "peak MiB", "answers (status: count)")
	fmt.Printf("%-16s %8s %10.0f\n", "started", "", mib(tree.phase()))
	for _, in := range inputs {
		if cfg.only != "" && !slices.Contains(strings.Split(cfg.only, ","), in.name) {
			continue
		}
		fmt.Fprintf(os.Stderr, "sending %s...\n", in.name)
		start := time.Now()
		answers, err := in.send(s, dir)
		if err != nil {
			return fmt.Errorf("%s: %w", in.name, err)
		}
		fmt.Printf("%-16s %8.1f %10.0f  %s\n", in.name, time.Since(start).Seconds(), mib(tree.phase()), counts(answers))
	}
	peak := tree.peakOfRun()
	fmt.Fprintf(os.Stderr, "idling %v...\n", cfg.idle)
	time.Sleep(cfg.idle)
	idle := tree.now()
	fmt.Printf("\npeak of the process tree: %.0f MiB (target under 500)\n", mib(peak))
	fmt.Printf("after %v idle: %.0f MiB (target under 150)\n", cfg.idle, mib(idle))
	fmt.Printf("ERROR lines in the server log: %d\n", s.errorLines())
	return nil
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func counts(m map[int]int) string {
	var keys []int
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		name := strconv.Itoa(k)
		if k == 0 {
			name = "cut"
		}
		parts = append(parts, fmt.Sprintf("%s: %d", name, m[k]))
	}
	return strings.Join(parts, ", ")
}

// server is the running `pulsewire serve`.
type server struct {
	cmd              *exec.Cmd
	log              string
	prod, test       string // base URLs
	prodKey, testKey string
	exited           chan struct{}
}

func startServer(bin, dir string) (*server, error) {
	data := filepath.Join(dir, "data")
	s := &server{log: filepath.Join(dir, "server.log"), exited: make(chan struct{})}
	for _, env := range []string{"production", "test"} {
		out, err := exec.Command(bin, "client", "create", "--data-dir", data, "--create-data-dir", "--env", env, "--name", "memory").Output()
		if err != nil {
			return nil, fmt.Errorf("client create: %w", err)
		}
		var c struct{ APIKey string }
		if err := json.Unmarshal(out, &c); err != nil {
			return nil, err
		}
		if env == "production" {
			s.prodKey = c.APIKey
		} else {
			s.testKey = c.APIKey
		}
	}
	logFile, err := os.Create(s.log)
	if err != nil {
		return nil, err
	}
	s.cmd = exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--test-addr", "127.0.0.1:0", "--data-dir", data, "--log-format", "json")
	s.cmd.Stderr = logFile
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.cmd.Wait(); logFile.Close(); close(s.exited) }()
	for deadline := time.Now().Add(30 * time.Second); s.prod == "" || s.test == ""; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			s.stop()
			return nil, errors.New("the server did not start")
		}
		b, _ := os.ReadFile(s.log)
		for line := range strings.SplitSeq(string(b), "\n") {
			var l struct{ Msg, Env, Addr string }
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "listening" {
				if l.Env == "production" {
					s.prod = "http://" + l.Addr
				} else {
					s.test = "http://" + l.Addr
				}
			}
		}
	}
	return s, nil
}

func (s *server) stop() {
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
	}
}

func (s *server) errorLines() int {
	b, _ := os.ReadFile(s.log)
	return strings.Count(string(b), `"level":"ERROR"`)
}

// both sends to Production and Test at once, n times each, and counts the
// statuses (0 for a request that failed without one).
func (s *server) both(n int, send func(base, key string) int) map[int]int {
	var mu sync.Mutex
	answers := map[int]int{}
	var wg sync.WaitGroup
	for range n {
		for _, e := range [][2]string{{s.prod, s.prodKey}, {s.test, s.testKey}} {
			wg.Go(func() {
				status := send(e[0], e[1])
				mu.Lock()
				answers[status]++
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	return answers
}

var client = &http.Client{Timeout: 10 * time.Minute}

// post sends body and returns the status (0 when the request failed).
func post(url, key, contentType string, body io.Reader) int {
	req, err := http.NewRequest("POST", url, body)
	if err != nil {
		return 0
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", contentType)
	res, err := client.Do(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// filePart is one file of a multipart body.
type filePart struct {
	name, ctype string
	open        func() io.Reader
}

// postForm streams a multipart body of files and fields.
func postForm(url, key string, files []filePart, fields map[string]string) int {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		var err error
		for k, v := range fields {
			if err = mw.WriteField(k, v); err != nil {
				break
			}
		}
		for i, f := range files {
			if err != nil {
				break
			}
			h := textproto.MIMEHeader{}
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename="f%d"`, f.name, i))
			h.Set("Content-Type", f.ctype)
			var w io.Writer
			if w, err = mw.CreatePart(h); err == nil {
				_, err = io.Copy(w, f.open())
			}
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	defer pr.Close()
	return post(url, key, mw.FormDataContentType(), pr)
}

func fileOf(path string) func() io.Reader {
	return func() io.Reader {
		f, err := os.Open(path)
		if err != nil {
			return strings.NewReader("")
		}
		return f // closed when the process ends; a few files
	}
}

// handshakeFlood: 1000 WebSocket connections from 50 loopback addresses,
// each sending 1 MiB of a first message that never ends, held 8 s.
func handshakeFlood(s *server, _ string) (map[int]int, error) {
	var mu sync.Mutex
	answers := map[int]int{}
	var wg sync.WaitGroup
	payload := append([]byte(`{"type":"open","token":"`), bytes.Repeat([]byte("x"), 1<<20)...)
	for i := range 1000 {
		base := s.prod
		if i%2 == 1 {
			base = s.test
		}
		src := fmt.Sprintf("127.0.0.%d", 1+i%50)
		wg.Go(func() {
			status := holdHandshake(strings.TrimPrefix(base, "http://"), src, payload, 8*time.Second)
			mu.Lock()
			answers[status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	return answers, nil
}

// holdHandshake upgrades, sends payload as the start of a longer masked
// text frame, and holds the connection; it returns the upgrade's status.
func holdHandshake(addr, src string, payload []byte, hold time.Duration) int {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 10 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return 0
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(hold + 10*time.Second))
	fmt.Fprintf(c, "GET /sessions HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", addr)
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		return 0
	}
	if res.StatusCode != http.StatusSwitchingProtocols {
		return res.StatusCode
	}
	// FIN, text; masked (a zero key leaves the payload as it is), 64-bit
	// length: 100 bytes more than is sent.
	head := []byte{0x81, 0x80 | 127, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	n := uint64(len(payload) + 100)
	for i := range 8 {
		head[2+i] = byte(n >> (56 - 8*i))
	}
	c.Write(head)
	c.Write(payload)
	time.Sleep(hold)
	return res.StatusCode
}

// stalledUploads: 40 uploads to Test that send their headers and nothing
// more, while Production runs signals every 200 ms for 15 s.
func stalledUploads(s *server, _ string) (map[int]int, error) {
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 40 {
		c, err := net.Dial("tcp", strings.TrimPrefix(s.test, "http://"))
		if err != nil {
			return nil, err
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "POST /measures/rppg/video HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
			"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000000\r\n\r\n", s.testKey)
	}
	answers := map[int]int{}
	body := contactSignal(1200)
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		answers[post(s.prod+"/measures/cppg/signal", s.prodKey, "application/json", strings.NewReader(body))]++
	}
	return answers, nil
}

// contactSignal is a contact signal body of n samples at 100 Hz.
func contactSignal(n int) string {
	var b strings.Builder
	b.WriteString(`{"signal":{"timestamps":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i * 10))
	}
	b.WriteString(`],"values":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%.2f", 100+float64(i%80)/40)
	}
	b.WriteString(`]}}`)
	return b.String()
}

// streamed is a body written by gen into a pipe as it is read.
func streamed(gen func(w *bufio.Writer)) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 64<<10)
		gen(w)
		pw.CloseWithError(w.Flush())
	}()
	return pr
}

// signalTags: 99 MiB bodies whose tags array holds over 2 million
// entries, three per environment at once.
func signalTags(s *server, _ string) (map[int]int, error) {
	return s.both(3, func(base, key string) int {
		return post(base+"/measures/cppg/signal", key, "application/json", streamed(func(w *bufio.Writer) {
			w.WriteString(`{"signal":{"timestamps":[0,10],"values":[1,2]},"tags":["t"`)
			for range (99 << 20) / 4 {
				w.WriteString(`,"t"`)
			}
			w.WriteString(`]}`)
		}))
	}), nil
}

// signalSamples: camera signals of the most samples a body may hold over
// the longest span (300,000 a channel over 10 minutes: 500 a second),
// three per environment at once.
func signalSamples(s *server, _ string) (map[int]int, error) {
	const n = 300_000
	return s.both(3, func(base, key string) int {
		return post(base+"/measures/rppg/signal", key, "application/json", streamed(func(w *bufio.Writer) {
			w.WriteString(`{"signal":{`)
			for c, name := range []string{"timestamps", "r", "g", "b"} {
				if c > 0 {
					w.WriteByte(',')
				}
				fmt.Fprintf(w, "%q:[", name)
				for i := range n {
					if i > 0 {
						w.WriteByte(',')
					}
					if c == 0 {
						w.WriteString(strconv.Itoa(i * 2))
					} else {
						w.WriteString(strconv.Itoa(100 + (i+c)%7))
					}
				}
				w.WriteByte(']')
			}
			w.WriteString(`}}`)
		}))
	}), nil
}

// ffmpeg makes a file in dir once.
func ffmpeg(dir, name string, args ...string) (string, error) {
	path := filepath.Join(dir, name)
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	full := append([]string{"-nostdin", "-hide_banner", "-loglevel", "error"}, args...)
	if out, err := exec.Command("ffmpeg", append(full, "-y", path)...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("ffmpeg: %v\n%s", err, out)
	}
	return path, nil
}

// videoPixels: a 1-frame MP4 of 8192x8192 pixels (about 200 KB), three
// per environment at once.
func videoPixels(s *server, dir string) (map[int]int, error) {
	fmt.Fprintln(os.Stderr, "  encoding an 8192x8192 frame...")
	path, err := ffmpeg(dir, "pixels.mp4", "-f", "lavfi", "-i", "color=c=black:size=8192x8192:rate=1:duration=1",
		"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p")
	if err != nil {
		return nil, err
	}
	return s.both(3, func(base, key string) int {
		return postForm(base+"/measures/rppg/video", key, []filePart{{"video", "video/mp4", fileOf(path)}}, nil)
	}), nil
}

// writePNG encodes img into dir once.
func writePNG(dir, name string, img image.Image) (string, error) {
	path := filepath.Join(dir, name)
	var b bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&b, img); err != nil {
		return "", err
	}
	return path, os.WriteFile(path, b.Bytes(), 0o600)
}

// pngBombs: PNGs of a single colour at the pixel limit (7000x7000),
// small on the wire: 8-bit grey, 8-bit RGBA and 16-bit RGBA, three a
// request, two requests per environment at once.
func pngBombs(s *server, dir string) (map[int]int, error) {
	fmt.Fprintln(os.Stderr, "  encoding 7000x7000 PNGs...")
	r := image.Rect(0, 0, 7000, 7000)
	grey := image.NewGray(r)
	rgba := image.NewNRGBA(r)
	rgba64 := image.NewNRGBA64(r)
	for i := range rgba.Pix {
		rgba.Pix[i] = 200
	}
	for i := range rgba64.Pix {
		rgba64.Pix[i] = 200
	}
	var paths []string
	for i, img := range []image.Image{grey, rgba, rgba64} {
		p, err := writePNG(dir, fmt.Sprintf("bomb%d.png", i), img)
		if err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return s.both(2, func(base, key string) int {
		var files []filePart
		for _, p := range paths {
			files = append(files, filePart{"images", "image/png", fileOf(p)})
		}
		return postForm(base+"/measures/rppg/images", key, files, nil)
	}), nil
}

// noiseJPEG is a JPEG of random pixels, which compresses badly: as large
// as it can be for its size.
func noiseJPEG(w, h, quality int) []byte {
	img := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio444)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, plane := range [][]byte{img.Y, img.Cb, img.Cr} {
		for i := range plane {
			plane[i] = byte(rng.Uint32())
		}
	}
	var b bytes.Buffer
	jpeg.Encode(&b, img, &jpeg.Options{Quality: quality})
	return b.Bytes()
}

// bigImages: three noise JPEGs of just under 30 MB a request, two
// requests per environment at once.
func bigImages(s *server, dir string) (map[int]int, error) {
	fmt.Fprintln(os.Stderr, "  encoding a 30 MB JPEG...")
	path := filepath.Join(dir, "big.jpg")
	h := 7000 // about 33 MB; shrunk until it fits
	for {
		data := noiseJPEG(3400, h, 95)
		if len(data) <= 30<<20 {
			if err := os.WriteFile(path, data, 0o600); err != nil {
				return nil, err
			}
			fmt.Fprintf(os.Stderr, "  3400x%d, %d bytes\n", h, len(data))
			break
		}
		h = h * (30 << 20) / len(data) * 99 / 100
	}
	return s.both(2, func(base, key string) int {
		files := []filePart{{"images", "image/jpeg", fileOf(path)}, {"images", "image/jpeg", fileOf(path)}, {"images", "image/jpeg", fileOf(path)}}
		return postForm(base+"/measures/rppg/images", key, files, nil)
	}), nil
}

// bigVideos: a 30 s 1280x720 H.264 video of about 100 MB (noise at 27
// Mbit/s), two per environment at once.
func bigVideos(s *server, dir string) (map[int]int, error) {
	fmt.Fprintln(os.Stderr, "  encoding a 100 MB video...")
	path, err := ffmpeg(dir, "big.mp4", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=30:duration=30",
		"-vf", "noise=alls=60:allf=t", "-c:v", "libx264", "-preset", "ultrafast",
		"-b:v", "27M", "-maxrate", "27M", "-bufsize", "54M", "-pix_fmt", "yuv420p")
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(path); err == nil {
		fmt.Fprintf(os.Stderr, "  %d bytes\n", st.Size())
	}
	return s.both(2, func(base, key string) int {
		return postForm(base+"/measures/rppg/video", key, []filePart{{"video", "video/mp4", fileOf(path)}}, nil)
	}), nil
}

// captures: 3,600 face crops of about 27 KB (noise, 128x128) a request,
// two per environment at once.
func captures(s *server, _ string) (map[int]int, error) {
	crop := noiseJPEG(128, 128, 92)
	stamps := make([]string, 3600)
	for i := range stamps {
		stamps[i] = strconv.Itoa(i * 33)
	}
	return s.both(2, func(base, key string) int {
		files := make([]filePart, 3600)
		for i := range files {
			files[i] = filePart{"captures", "image/jpeg", func() io.Reader { return bytes.NewReader(crop) }}
		}
		return postForm(base+"/measures/rppg/captures", key, files, map[string]string{"timestamps": strings.Join(stamps, ",")})
	}), nil
}
