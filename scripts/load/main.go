// Command load measures how many live sessions one server carries: it
// builds and starts `pulsewire serve`, opens N realtime sessions over
// WebSocket (two per account, the opening rate's allowance of a second),
// and streams 320x240 JPEG frames of a synthetic face at 30 frames a second
// on each, as the widget does. It prints, over the streaming time: how late
// each vitals message came against its due time (one a second from the
// session's opening), the frames dropped, the time to the first heart
// rate, the server's CPU time (so, sessions per core), and the machine's
// load average, which other work on the machine raises.
//
//	go run ./scripts/load [-sessions 40] [-seconds 40] [-bin ./bin/pulsewire]
//
// Target: 40 sessions on 2 cores, every vitals message within
// 1.5 s of its due time and no frame dropped.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/coder/websocket"
	"github.com/pulsewire/pulsewire/scripts/devserver"
	"github.com/pulsewire/pulsewire/scripts/synth/clip"
)

func main() {
	var cfg config
	flag.IntVar(&cfg.sessions, "sessions", 40, "concurrent realtime sessions")
	flag.DurationVar(&cfg.stream, "seconds", 40*time.Second, "how long each session streams")
	flag.DurationVar(&cfg.ramp, "ramp", 2*time.Second, "the sessions open spread over this time")
	flag.StringVar(&cfg.bin, "bin", "", "pulsewire binary (default: build one)")
	flag.IntVar(&cfg.quality, "quality", 85, "JPEG quality of the frames")
	flag.Parse()
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

type config struct {
	sessions int
	stream   time.Duration
	ramp     time.Duration
	bin      string
	quality  int
}

const (
	width, height = 320, 240
	fps           = 30.0
	lateLimit     = 1500 * time.Millisecond
)

func run(cfg config) error {
	dir, bin, err := devserver.Prepare("load", cfg.bin)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg.bin = bin
	fmt.Fprintln(os.Stderr, "drawing the synthetic face...")
	frames, err := drawFrames(min(cfg.stream, 30*time.Second), cfg.quality)
	if err != nil {
		return err
	}
	srv, err := startServer(cfg, dir)
	if err != nil {
		return err
	}
	defer srv.stop()
	tokens, err := mintTokens(cfg, srv, dir)
	if err != nil {
		return err
	}

	fmt.Fprintf(os.Stderr, "streaming %d sessions for %v...\n", cfg.sessions, cfg.stream)
	load := &loadSampler{}
	go load.sample(time.Second)
	cpu0, self0, wall0 := srv.cpu(), selfCPU(), time.Now()
	results := make([]sessionResult, cfg.sessions)
	var wg sync.WaitGroup
	for i := range cfg.sessions {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * cfg.ramp / time.Duration(cfg.sessions))
			results[i] = runSession(srv.ws, tokens[i], frames, cfg.stream)
		})
	}
	wg.Wait()
	cpu, self, wall := srv.cpu()-cpu0, selfCPU()-self0, time.Since(wall0)
	load.stop()
	report(os.Stdout, cfg, results, cpu, self, wall, load, len(frames[0]))
	return nil
}

// drawFrames renders the synthetic face (hr 72) and encodes each frame as
// the widget would.
func drawFrames(length time.Duration, quality int) ([][]byte, error) {
	c, err := clip.New(clip.Config{Width: width, Height: height, FPS: fps, Seconds: length.Seconds(), Seed: 3, HeartRate: 72})
	if err != nil {
		return nil, err
	}
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	out := make([][]byte, c.Len())
	var buf bytes.Buffer
	for i := range out {
		c.Render(i, img)
		buf.Reset()
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: quality}); err != nil {
			return nil, err
		}
		out[i] = bytes.Clone(buf.Bytes())
	}
	return out, nil
}

// server is the running pulsewire serve.
type server struct {
	cmd      *exec.Cmd
	api, ws  string // Test environment
	exited   chan struct{}
	dataDir  string
	bin      string
	pidStat  string
	clockTck float64
}

func startServer(cfg config, dir string) (*server, error) {
	s := &server{dataDir: filepath.Join(dir, "data"), bin: cfg.bin, exited: make(chan struct{}), clockTck: 100}
	s.cmd = exec.Command(cfg.bin, "serve", "--addr", "127.0.0.1:0", "--test-addr", "127.0.0.1:0",
		"--data-dir", s.dataDir, "--log-format", "json",
		"--max-sessions", strconv.Itoa(cfg.sessions+10), "--session-max-length", (cfg.stream + time.Minute).String())
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.cmd.Wait(); close(s.exited) }()
	s.pidStat = fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid)
	listening := make(chan string, 2)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var l struct{ Msg, Env, Addr string }
			if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "listening" && l.Env == "test" {
				listening <- l.Addr
			}
		}
	}()
	select {
	case addr := <-listening:
		s.api, s.ws = "http://"+addr, "ws://"+addr+"/sessions"
		return s, nil
	case <-time.After(30 * time.Second):
		s.stop()
		return nil, errors.New("the server did not start")
	case <-s.exited:
		return nil, errors.New("the server exited")
	}
}

func (s *server) stop() {
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
	}
}

// cpu is the server's CPU time so far (user and system).
func (s *server) cpu() time.Duration {
	b, err := os.ReadFile(s.pidStat)
	if err != nil {
		return 0
	}
	// The fields after the command name, which is in parentheses.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return time.Duration((utime + stime) / s.clockTck * float64(time.Second))
}

// mintTokens creates an account per two sessions (the opening rate allows
// two a second per account) and a realtime token with maxSessions 1 for
// each session.
func mintTokens(cfg config, s *server, dir string) ([]string, error) {
	var tokens []string
	var key string
	for i := range cfg.sessions {
		if i%2 == 0 {
			out, err := exec.Command(s.bin, "client", "create", "--data-dir", s.dataDir, "--env", "test", "--name", fmt.Sprintf("load-%d", i/2)).Output()
			if err != nil {
				return nil, fmt.Errorf("client create: %w", err)
			}
			var c struct{ APIKey string }
			if err := json.Unmarshal(out, &c); err != nil {
				return nil, err
			}
			key = c.APIKey
		}
		req, _ := http.NewRequest("POST", s.api+"/access-tokens",
			strings.NewReader(`{"permissions":[{"name":"measurement.realtime","maxSessions":1}],"duration":"1h"}`))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		var t struct{ Value string }
		err = json.NewDecoder(res.Body).Decode(&t)
		res.Body.Close()
		if err != nil || res.StatusCode != 201 {
			return nil, fmt.Errorf("mint a token: %d %v", res.StatusCode, err)
		}
		tokens = append(tokens, t.Value)
	}
	return tokens, nil
}

// sessionResult is what one session saw.
type sessionResult struct {
	err       error
	lateness  []time.Duration // per vitals message: arrival minus due time
	firstHR   time.Duration   // from the first frame sent; 0 when none came
	sent      int
	last      vitals // the last vitals message
	gotResult bool
}

type vitals struct {
	Type           string
	ElapsedMs      int64
	HR             struct{ Error *string }
	FramesReceived int64
	FramesDropped  int64
	FramesRejected int64
}

// runSession opens a realtime session, streams frames at fps for length,
// stops it and waits for the result.
func runSession(url, token string, frames [][]byte, length time.Duration) (r sessionResult) {
	ctx, cancel := context.WithTimeout(context.Background(), length+2*time.Minute)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		r.err = err
		return r
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	open, _ := json.Marshal(map[string]string{"type": "open", "token": token, "chain": "realtime"})
	if err := c.Write(ctx, websocket.MessageText, open); err != nil {
		r.err = err
		return r
	}
	if _, _, err := c.Read(ctx); err != nil {
		r.err = fmt.Errorf("open: %w", err)
		return r
	}
	opened := time.Now()
	var mu sync.Mutex
	var started time.Time
	sent := make(chan int, 1)
	go func() {
		tick := time.NewTicker(time.Second / fps)
		defer tick.Stop()
		start := time.Now()
		mu.Lock()
		started = start
		mu.Unlock()
		n := 0
		for now := range tick.C {
			if now.Sub(start) >= length {
				break
			}
			msg := make([]byte, 8, 8+len(frames[n%len(frames)]))
			binary.BigEndian.PutUint64(msg, uint64(float64(n)*1e6/fps))
			msg = append(msg, frames[n%len(frames)]...)
			if err := c.Write(ctx, websocket.MessageBinary, msg); err != nil {
				break
			}
			n++
		}
		sent <- n
		stop, _ := json.Marshal(map[string]string{"type": "stop"})
		c.Write(ctx, websocket.MessageText, stop)
	}()
	k := 0
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			r.err = fmt.Errorf("after %d vitals: %w", k, err)
			break
		}
		var v vitals
		json.Unmarshal(b, &v)
		if v.Type == "result" {
			r.gotResult = true
			break
		}
		if v.Type != "vitals" {
			continue
		}
		k++
		r.lateness = append(r.lateness, time.Since(opened.Add(time.Duration(k)*time.Second)))
		r.last = v
		if r.firstHR == 0 && v.HR.Error == nil {
			mu.Lock()
			r.firstHR = time.Since(started)
			mu.Unlock()
		}
	}
	r.sent = <-sent
	c.Close(websocket.StatusNormalClosure, "")
	return r
}

// loadSampler reads the machine's one-minute load average.
type loadSampler struct {
	mu      sync.Mutex
	samples []float64
	done    chan struct{}
	once    sync.Once
}

func (l *loadSampler) sample(every time.Duration) {
	l.mu.Lock()
	l.done = make(chan struct{})
	l.mu.Unlock()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-l.done:
			return
		case <-t.C:
		}
		b, err := os.ReadFile("/proc/loadavg")
		if err != nil {
			return
		}
		if x, err := strconv.ParseFloat(strings.Fields(string(b))[0], 64); err == nil {
			l.mu.Lock()
			l.samples = append(l.samples, x)
			l.mu.Unlock()
		}
	}
}

func (l *loadSampler) stop() {
	l.once.Do(func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.done != nil {
			close(l.done)
		}
	})
}

// selfCPU is this process's CPU time so far: the clients' share of the
// machine.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func report(w io.Writer, cfg config, rs []sessionResult, cpu, self, wall time.Duration, load *loadSampler, frameBytes int) {
	var late []time.Duration
	var firstHR []time.Duration
	var failed, lateCount, sent, received, dropped, rejected, results int
	for _, r := range rs {
		if r.err != nil {
			failed++
			fmt.Fprintln(os.Stderr, "session:", r.err)
		}
		for _, d := range r.lateness {
			late = append(late, d)
			if d > lateLimit {
				lateCount++
			}
		}
		if r.firstHR > 0 {
			firstHR = append(firstHR, r.firstHR)
		}
		sent += r.sent
		received += int(r.last.FramesReceived)
		dropped += int(r.last.FramesDropped)
		rejected += int(r.last.FramesRejected)
		if r.gotResult {
			results++
		}
	}
	slices.Sort(late)
	slices.Sort(firstHR)
	cores := cpu.Seconds() / wall.Seconds()
	load.mu.Lock()
	ls := slices.Clone(load.samples)
	load.mu.Unlock()
	slices.Sort(ls)
	q := func(x []time.Duration, p float64) string {
		if len(x) == 0 {
			return "-"
		}
		return x[min(len(x)-1, int(p*float64(len(x))))].Round(time.Millisecond).String()
	}
	fmt.Fprintf(w, "sessions            %d (%d failed, %d results), %v each, %dx%d JPEG at %g fps (%d B a frame)\n",
		len(rs), failed, results, cfg.stream, width, height, fps, frameBytes)
	// A dropped frame costs the server almost nothing: when the server
	// dropped frames, its CPU per session understates what a session
	// costs, and the CPU per analysed frame is the number to plan with.
	caveat := ""
	if dropped > 0 {
		caveat = ", too many: frames were dropped"
	}
	fmt.Fprintf(w, "server CPU          %.2f cores over %v: %.1f sessions per core%s (the clients used %.2f cores)\n",
		cores, wall.Round(time.Second), float64(len(rs))/cores, caveat, self.Seconds()/wall.Seconds())
	if analysed := received - dropped; analysed > 0 {
		fmt.Fprintf(w, "server CPU a frame  %.2f ms per analysed frame, the vitals included\n", cpu.Seconds()*1000/float64(analysed))
	}
	fmt.Fprintf(w, "vitals              %d; lateness p50 %s, p99 %s, max %s; later than %v: %d\n",
		len(late), q(late, 0.5), q(late, 0.99), q(late, 1), lateLimit, lateCount)
	fmt.Fprintf(w, "frames              %d sent, %d received (by the last vitals), %d dropped, %d rejected\n", sent, received, dropped, rejected)
	fmt.Fprintf(w, "time to first hr    p50 %s, max %s (%d of %d sessions)\n", q(firstHR, 0.5), q(firstHR, 1), len(firstHR), len(rs))
	if len(ls) > 0 {
		fmt.Fprintf(w, "machine load        1-min load average %.1f to %.1f while streaming\n", ls[0], ls[len(ls)-1])
	}
	verdict := "met"
	if failed > 0 || lateCount > 0 || dropped > 0 {
		verdict = "NOT met"
	}
	fmt.Fprintf(w, "target (all vitals within %v, no frame dropped): %s\n", lateLimit, verdict)
}
