package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pulsewire/pulsewire/control"
	"github.com/pulsewire/pulsewire/storage"
)

// benchClients is how many clients share a load: every request of a
// client's key counts against its limits (20 tokens and 300 requests a
// minute), and the load is spread so that none is reached.
const benchClients = 600

// workload is one kind of request the benchmark sends.
type workload struct {
	name    string
	path    string
	body    string
	status  int
	workers int
}

func workloads() []workload {
	return []workload{
		{"POST /access-tokens", "/access-tokens",
			`{"permissions":[{"name":"measurement.scan","maxSessions":1}],"duration":"10m"}`, 201, 16},
		{"POST /measures/cppg/signal (30 s)", "/measures/cppg/signal", contactSignal(30*time.Second, 100), 201, 8},
	}
}

// contactSignal is a contact PPG trace of a pulse at 72 bpm sampled at
// rateHz for d, as the signal route takes it.
func contactSignal(d time.Duration, rateHz float64) string {
	n := int(d.Seconds() * rateHz)
	ts, vs := make([]string, n), make([]string, n)
	for i := range n {
		t := float64(i) / rateHz
		ts[i] = strconv.Itoa(int(t * 1000))
		vs[i] = strconv.FormatFloat(100+math.Sin(2*math.Pi*1.2*t)+0.3*math.Sin(2*math.Pi*2.4*t), 'f', 3, 64)
	}
	return `{"signal":{"timestamps":[` + strings.Join(ts, ",") + `],"values":[` + strings.Join(vs, ",") + `]}}`
}

// runBench measures each workload through the proxy of a cluster of 1,
// then 3 instances, and prints a table.
func runBench(bin string, each time.Duration) error {
	fmt.Printf("Through HAProxy on this machine (%d cores shared by the load, the instances, HAProxy and PostgreSQL).\n", runtime.NumCPU())
	fmt.Println("CPU ms per request: of all instances together, and of PostgreSQL.")
	fmt.Printf("\n| instances | request | concurrency | requests/s | p50 ms | p99 ms | errors | instance CPU ms/req | PostgreSQL CPU ms/req |\n")
	fmt.Printf("|---|---|---|---|---|---|---|---|---|\n")
	for _, n := range []int{1, 3} {
		ctx := context.Background()
		c, err := startCluster(ctx, clusterOptions{instances: n, bin: bin, durable: true})
		if err != nil {
			return err
		}
		keys, err := benchKeys(ctx, c)
		if err != nil {
			c.stop()
			return err
		}
		for _, w := range workloads() {
			r := c.load(w, keys, each)
			fmt.Printf("| %d | %s | %d | %.0f | %.1f | %.1f | %d | %.2f | %.2f |\n",
				n, w.name, w.workers, r.rate, r.p50, r.p99, r.errors, r.instanceCPU, r.databaseCPU)
		}
		c.stop()
	}
	return nil
}

// benchKeys creates the clients of a load on Test, straight in the
// database (the command line would start a process per client), and
// returns their API keys.
func benchKeys(ctx context.Context, c *cluster) ([]string, error) {
	db, err := storage.OpenPostgres(ctx, c.databaseURL(), string(control.Test), storage.Options{})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	svc := control.NewService(control.Test, db, nil) // clients have no media
	keys := make([]string, benchClients)
	for i := range keys {
		if _, keys[i], err = svc.CreateClient(ctx, control.NewClient{Name: fmt.Sprint("bench-", i)}); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// result is what one load measured.
type result struct {
	rate                     float64 // answered as expected, per second
	p50, p99                 float64 // ms
	errors                   int
	instanceCPU, databaseCPU float64 // ms of CPU per request
}

// load sends w through the Test frontend from w.workers workers for d, a
// key of keys per request in turn.
func (c *cluster) load(w workload, keys []string, d time.Duration) result {
	var (
		next   atomic.Int64
		mu     sync.Mutex // protects took and errors
		took   []time.Duration
		errors int
		wg     sync.WaitGroup
	)
	cpuBefore, dbBefore := c.cpu()
	start := time.Now()
	end := start.Add(d)
	for range w.workers {
		wg.Go(func() {
			var mine []time.Duration
			bad := 0
			for time.Now().Before(end) {
				key := keys[int(next.Add(1))%len(keys)]
				req, _ := http.NewRequest("POST", c.test+w.path, strings.NewReader(w.body))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/json")
				t0 := time.Now()
				resp, err := httpClient.Do(req)
				if err != nil {
					bad++
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != w.status {
					bad++
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			took = append(took, mine...)
			errors += bad
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpuAfter, dbAfter := c.cpu()
	r := result{errors: errors, rate: float64(len(took)) / elapsed.Seconds()}
	if len(took) == 0 {
		return r
	}
	slices.Sort(took)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	r.p50, r.p99 = ms(took[len(took)/2]), ms(took[len(took)*99/100])
	per := func(t time.Duration) float64 { return ms(t) / float64(len(took)) }
	r.instanceCPU, r.databaseCPU = per(cpuAfter-cpuBefore), per(dbAfter-dbBefore)
	return r
}

// cpu is the CPU time the instances and PostgreSQL (its server and every
// backend it forked) have used so far.
func (c *cluster) cpu() (instances, database time.Duration) {
	for _, in := range c.instances {
		instances += processCPU(in.cmd.Process.Pid)
	}
	postmaster := c.pg.Pid()
	database = processCPU(postmaster)
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, s := range stats {
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(s)))
		if f := statFields(pid); len(f) > 1 && f[1] == strconv.Itoa(postmaster) {
			database += processCPU(pid)
		}
	}
	return instances, database
}

// statFields are the fields of /proc/pid/stat after the command name:
// state, ppid, ... (utime and stime are the 12th and 13th).
func statFields(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
}

// processCPU is the CPU time (user and system) of process pid, in clock
// ticks of 10 ms (Linux's USER_HZ).
func processCPU(pid int) time.Duration {
	f := statFields(pid)
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
