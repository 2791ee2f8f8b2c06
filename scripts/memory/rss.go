package main

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// sampler samples the resident memory of a process and all its
// descendants (from /proc), keeping the peak since the last phase and of
// the whole run.
type sampler struct {
	root int
	done chan struct{}
	once sync.Once

	mu        sync.Mutex // protects the fields below
	last      int64
	phasePeak int64
	runPeak   int64
}

func (s *sampler) run(every time.Duration) {
	s.mu.Lock()
	s.done = make(chan struct{})
	s.mu.Unlock()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		rss := treeRSS(s.root)
		s.mu.Lock()
		s.last = rss
		s.phasePeak = max(s.phasePeak, rss)
		s.runPeak = max(s.runPeak, rss)
		done := s.done
		s.mu.Unlock()
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
}

func (s *sampler) stop() {
	s.once.Do(func() {
		s.mu.Lock()
		close(s.done)
		s.mu.Unlock()
	})
}

// phase returns the peak since the last call and starts a new phase.
func (s *sampler) phase() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.phasePeak
	s.phasePeak = s.last
	return p
}

func (s *sampler) peakOfRun() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runPeak
}

func (s *sampler) now() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// treeRSS is the resident memory of root and its descendants, in bytes.
func treeRSS(root int) int64 {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	parent := map[int]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// "pid (command) state ppid ...": the command may hold spaces.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 1 {
			parent[pid], _ = strconv.Atoi(f[1])
		}
	}
	var total int64
	for pid := range parent {
		for p := pid; p > 1; p = parent[p] {
			if p == root {
				total += vmRSS(pid)
				break
			}
		}
	}
	return total
}

// vmRSS reads a process's resident set size, in bytes.
func vmRSS(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
