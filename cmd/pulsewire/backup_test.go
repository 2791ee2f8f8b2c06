package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pulsewire/pulsewire/control"
	"github.com/pulsewire/pulsewire/storage"
)

// seedEnvironment creates a client in env of dataDir, with n measures of
// many tags (a database of some megabytes, which takes a while to copy),
// and returns its API key.
func seedEnvironment(t *testing.T, dataDir string, env control.Env, n int) string {
	t.Helper()
	ctx := context.Background()
	svc, db, err := openEnvironment(ctx, storeConfig{dataDir: dataDir}, env, time.UTC, "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, key, err := svc.CreateClient(ctx, control.NewClient{Name: "seeded"})
	if err != nil {
		t.Fatal(err)
	}
	tags := make([]string, 100)
	for i := range tags {
		tags[i] = fmt.Sprintf("a-long-label-that-takes-room-in-every-row-%03d", i)
	}
	batch := make([]storage.NewMeasure, 1000)
	for i := range batch {
		batch[i] = storage.NewMeasure{Tags: tags}
	}
	for range n / len(batch) {
		if _, err := db.CreateMeasures(ctx, c, batch); err != nil {
			t.Fatal(err)
		}
	}
	return key
}

// write is a write the server answered: a measure created, or run from a
// signal (whose media the server keeps).
type write struct {
	base, key, id string
	ran           bool
	at            time.Time // when the answer came
}

// TestBackupWhileServing backs up both environments while a server writes
// to them, restores the backup into a new folder, and reads the data back
// through a server started on it: every write answered before the backup
// began is there, every measure of the copy reads back, and every run
// measure has its media.
func TestBackupWhileServing(t *testing.T) {
	bin := buildBinary(t)
	data := t.TempDir()
	keys := map[control.Env]string{
		control.Production: seedEnvironment(t, data, control.Production, 5000),
		control.Test:       seedEnvironment(t, data, control.Test, 1000),
	}
	srv := startServer(t, bin, data)
	bases := map[control.Env]string{control.Production: srv.prod, control.Test: srv.test}

	var (
		mu       sync.Mutex // protects answered
		answered []write
		wg       sync.WaitGroup
	)
	ctx, stop := context.WithCancel(context.Background())
	for env, base := range bases {
		for w := range 2 {
			// A client of its own for each writer, under its rate limit.
			_, key := createClient(t, bin, data, string(env), fmt.Sprint("writer", w))
			wg.Go(func() {
				for i := 0; ctx.Err() == nil; i++ {
					path, body, ran := "/measures", `{"tags":["during-backup"],"userData":{"age":40}}`, false
					if i%3 == 0 {
						path, body, ran = "/measures/cppg/signal", cppgSignal(`,"tags":["during-backup"]`), true
					}
					req, _ := http.NewRequestWithContext(ctx, "POST", base+path, strings.NewReader(body))
					req.Header.Set("Authorization", "Bearer "+key)
					resp, err := httpClient.Do(req)
					if err != nil {
						continue
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode == http.StatusCreated {
						mu.Lock()
						answered = append(answered, write{base, key, field(t, b, "id"), ran, time.Now()})
						mu.Unlock()
					}
					time.Sleep(5 * time.Millisecond)
				}
			})
		}
	}
	waitAnswered := func(n int) {
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			mu.Lock()
			got := len(answered)
			mu.Unlock()
			if got >= n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("only %d writes answered", got)
			}
		}
	}
	waitAnswered(20)

	out := filepath.Join(t.TempDir(), "backup")
	began := time.Now()
	summary := cli(t, bin, "backup", "--data-dir", data, "--out", out)
	ended := time.Now()
	mu.Lock()
	before := len(answered)
	mu.Unlock()
	waitAnswered(before + 10)
	stop()
	wg.Wait()

	var during int
	var mustHave []write
	for _, w := range answered {
		switch {
		case w.at.Before(began):
			mustHave = append(mustHave, w)
		case w.at.Before(ended):
			during++
		}
	}
	if during == 0 {
		t.Fatalf("no write was answered during the %v backup", ended.Sub(began))
	}
	t.Logf("backup took %v; %d writes answered before it, %d during; summary %s", ended.Sub(began), len(mustHave), during, summary)
	// A restore into the folder the server uses is refused, even with the
	// environments moved away: the server would write past them.
	moved := t.TempDir()
	for _, env := range []string{"production", "test"} {
		if err := os.Rename(filepath.Join(data, env), filepath.Join(moved, env)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := pulsewire(t, "restore", "--from", out, "--data-dir", data); err == nil || !strings.Contains(err.Error(), "another pulsewire serve is using") {
		t.Fatalf("a restore into a served folder: %v", err)
	}
	for _, env := range []string{"production", "test"} {
		if err := os.Rename(filepath.Join(moved, env), filepath.Join(data, env)); err != nil {
			t.Fatal(err)
		}
	}
	// Nor does a backup go inside the data folder.
	if _, _, err := pulsewire(t, "backup", "--data-dir", data, "--out", filepath.Join(data, "production", "bk")); err == nil || !strings.Contains(err.Error(), "inside the data folder") {
		t.Fatalf("a backup inside the data folder: %v", err)
	}
	if err := srv.stop(t, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}

	if _, _, err := pulsewire(t, "backup", "--data-dir", data, "--out", out); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("a backup over an existing folder: %v", err)
	}

	fresh := filepath.Join(t.TempDir(), "restored")
	cli(t, bin, "restore", "--from", out, "--data-dir", fresh)
	if _, _, err := pulsewire(t, "restore", "--from", out, "--data-dir", fresh); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("a restore over restored data: %v", err)
	}

	srv = startServer(t, bin, fresh)
	restored := map[string]string{bases[control.Production]: srv.prod, bases[control.Test]: srv.test} // old base -> new
	for _, w := range mustHave {
		status, body := call(t, "GET", restored[w.base]+"/measures/"+w.id, w.key, "")
		if status != 200 {
			t.Fatalf("measure %s written before the backup: %d after the restore", w.id, status)
		}
		if w.ran && !strings.Contains(string(body), `"hr":{"value":{"mean":75`) {
			t.Fatalf("run measure %s: %s", w.id, body)
		}
	}
	// Every measure of the copy reads back, and every run has its media.
	for env, base := range map[control.Env]string{control.Production: srv.prod, control.Test: srv.test} {
		checked := 0
		for _, w := range answered {
			if restored[w.base] != base {
				continue
			}
			status, body := call(t, "GET", base+"/measures/"+w.id, w.key, "")
			if status == 404 {
				continue // written after the copy was made
			}
			if status != 200 {
				t.Fatalf("%s: %d %s", w.id, status, body)
			}
			if ended := field(t, body, "status") == "ended"; ended != w.ran {
				t.Fatalf("%s: status %s", w.id, field(t, body, "status"))
			}
			// A run in progress when the copy was made is ended by the
			// restore, with PROCESSOR_FAIL, and its upload was not copied.
			cut := w.ran && strings.Contains(string(body), `"PROCESSOR_FAIL"`)
			if _, err := os.Stat(filepath.Join(fresh, string(env), "media", w.id, "signal.json")); w.ran && !cut && err != nil {
				t.Fatalf("run measure %s restored without its media: %v", w.id, err)
			}
			checked++
		}
		if status, body := call(t, "GET", base+"/measures?take=1", keys[env], ""); status != 200 || !strings.Contains(string(body), `"total":`) {
			t.Fatalf("seeded client of %s: %d %s", env, status, body)
		}
		t.Logf("%s: %d written measures read back", env, checked)
	}
	if err := srv.stop(t, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
}

// TestRestoreRefusesADamagedBackup: a byte changed in the database, or a
// media file that differs, fails the restore, which leaves nothing behind.
func TestRestoreRefusesADamagedBackup(t *testing.T) {
	bin := buildBinary(t)
	data := t.TempDir()
	_, key := createClient(t, bin, data, "test", "acme")
	srv := startServer(t, bin, data)
	status, body := call(t, "POST", srv.test+"/measures/cppg/signal", key, cppgSignal(""))
	if status != 201 {
		t.Fatalf("run: %d %s", status, body)
	}
	id := field(t, body, "id")
	out := filepath.Join(t.TempDir(), "backup")
	cli(t, bin, "backup", "--data-dir", data, "--out", out)
	srv.stop(t, syscall.SIGTERM)

	var m manifest
	b, err := os.ReadFile(filepath.Join(out, manifestName))
	if err != nil || json.Unmarshal(b, &m) != nil {
		t.Fatalf("manifest: %v %s", err, b)
	}
	if len(m.Environments) != 2 || len(m.Environments[control.Test].Media) != 1 || m.Environments[control.Test].Media[0].Measure != id {
		t.Fatalf("manifest %s", b)
	}
	for _, damage := range []string{filepath.Join("test", databaseName), filepath.Join("test", "media", id, "signal.json")} {
		t.Run(damage, func(t *testing.T) {
			copied := filepath.Join(t.TempDir(), "backup")
			if out, err := exec.Command("cp", "-a", out, copied).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v %s", err, out)
			}
			f, err := os.OpenFile(filepath.Join(copied, damage), os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteAt([]byte{'#'}, 100)
			f.Close()
			fresh := filepath.Join(t.TempDir(), "data")
			_, _, err = pulsewire(t, "restore", "--from", copied, "--data-dir", fresh)
			if err == nil || !strings.Contains(err.Error(), "damaged") {
				t.Fatalf("restore of a damaged backup: %v", err)
			}
			if entries, _ := os.ReadDir(fresh); len(entries) != 0 {
				t.Fatalf("a failed restore left %v", entries)
			}
		})
	}
	// An environment's folder that holds anything, a single file too, is
	// refused before any environment is touched.
	taken := filepath.Join(t.TempDir(), "data")
	stray := filepath.Join(taken, "production", databaseName)
	if err := os.MkdirAll(filepath.Dir(stray), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stray, []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := pulsewire(t, "restore", "--from", out, "--data-dir", taken); err == nil || !strings.Contains(err.Error(), "is not empty: restore into a new data folder") {
		t.Fatalf("a restore over a folder holding one file: %v", err)
	}
	if b, err := os.ReadFile(stray); err != nil || string(b) != "kept" {
		t.Fatalf("the file in the way: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(taken, "test")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the other environment was restored beside the refused one: %v", err)
	}
	if _, _, err := pulsewire(t, "restore", "--from", t.TempDir(), "--data-dir", t.TempDir()); err == nil || !strings.Contains(err.Error(), "complete backup") {
		t.Fatalf("restore from a folder without a manifest: %v", err)
	}
	if _, _, err := pulsewire(t, "backup", "--data-dir", t.TempDir(), "--out", filepath.Join(t.TempDir(), "b")); err == nil || !strings.Contains(err.Error(), "no database") {
		t.Fatalf("backup of an empty data folder: %v", err)
	}
}
