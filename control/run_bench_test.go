package control

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkVideoRuns720p sends one, then four 30-second 1280x720 H.264
// videos of a synthetic face at once to POST /measures/rppg/video over HTTP
// (loopback), on the default pool (a worker per CPU), and reports the
// throughput, the peak memory of the process and its ffmpeg children
// together, and the CPU time a run costs them (user and system), which the
// load of a shared machine does not change much.
func BenchmarkVideoRuns720p(b *testing.B) {
	path, err := synth("face-720p-30s.mp4", "-size", "1280x720", "-seconds", "30", "-motion", "0.01", "-seed", "9", "-crf", "20")
	if err != nil {
		b.Fatal(err)
	}
	api, db, svc := benchAPI(b, b.TempDir())
	defer db.Close()
	_, key, err := svc.CreateClient(context.Background(), NewClient{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(api)
	defer srv.Close()
	for _, runs := range []int{1, 4} {
		b.Run(fmt.Sprintf("%d-at-once", runs), func(b *testing.B) {
			var peak rssPeak
			cpu0 := cpuTime()
			for range b.N {
				peak.start()
				var wg sync.WaitGroup
				for range runs {
					wg.Go(func() {
						if status, body := postVideo(srv.URL, key, path); status != http.StatusCreated {
							b.Errorf("status %d: %s", status, body)
						}
					})
				}
				wg.Wait()
				peak.stop()
			}
			b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N*runs), "cpu-s/run")
			batch := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(float64(runs)*60/batch, "runs/min")
			b.ReportMetric(float64(runs)*30/batch, "x-realtime")
			b.ReportMetric(float64(peak.max)/(1<<20), "peak-MiB")
		})
	}
}

// cpuTime is the CPU time, user and system, of this process and of its
// children that have ended.
func cpuTime() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}

// postVideo uploads the video at path, streamed from the file.
func postVideo(base, key, path string) (int, []byte) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		f, err := os.Open(path)
		if err == nil {
			var w io.Writer
			if w, err = mw.CreatePart(map[string][]string{
				"Content-Disposition": {`form-data; name="video"; filename="face.mp4"`}, "Content-Type": {"video/mp4"}}); err == nil {
				_, err = io.Copy(w, f)
			}
			f.Close()
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	req, _ := http.NewRequest("POST", base+"/measures/rppg/video", pr)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

// rssPeak samples, every 20 ms, the resident memory of this process plus
// that of its children (ffmpeg), and keeps the largest sum.
type rssPeak struct {
	max  int64
	done chan struct{}
	wg   sync.WaitGroup
}

func (p *rssPeak) start() {
	p.done = make(chan struct{})
	p.wg.Go(func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			p.max = max(p.max, processTreeRSS())
			select {
			case <-p.done:
				return
			case <-tick.C:
			}
		}
	})
}

func (p *rssPeak) stop() {
	close(p.done)
	p.wg.Wait()
}

// processTreeRSS is the resident memory, bytes, of this process and its
// direct children.
func processTreeRSS() int64 {
	total := rssOf("self")
	for _, c := range children() {
		total += rssOf(strconv.Itoa(c.pid))
	}
	return total
}

// rssOf reads VmRSS of /proc/<pid>/status, bytes.
func rssOf(pid string) int64 {
	f, err := os.Open("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if kb, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")), 10, 64)
			return n << 10
		}
	}
	return 0
}

// BenchmarkCPPGSignalRun30s is the server time of POST /measures/cppg/signal
// with 30 s of a contact trace at 100 Hz (3,000 samples, about 50 KB of
// JSON): store, parse, analyse, end in one transaction, answer.
func BenchmarkCPPGSignalRun30s(b *testing.B) {
	api, db, svc := benchAPI(b, b.TempDir())
	defer db.Close()
	_, key, err := svc.CreateClient(context.Background(), NewClient{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	body, err := json.Marshal(pulseSignal("cppg", 1.2, 30))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		req := httptest.NewRequest("POST", "/measures/cppg/signal", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		start := time.Now()
		serve(b, api, req, http.StatusCreated)
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(times[len(times)*95/100].Microseconds())/1000, "p95-ms")
}
