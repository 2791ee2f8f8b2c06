package main

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/scripts/synth/clip"
)

func bpm(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

func TestReadReferences(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name, csv string
		want      []recording
		err       string // in the error, "" for none
	}{
		{name: "with groups, any column order, spaces", csv: "hr,camera,group,file\n 72.5,c920,dark, a.mp4\n88,c920,light,b.webm\n",
			want: []recording{{file: "a.mp4", hr: 72.5, br: nan, rmssd: nan, group: "dark"}, {file: "b.webm", hr: 88, br: nan, rmssd: nan, group: "light"}}},
		{name: "without groups, header in capitals", csv: "File,HR\na.mp4,61\n", want: []recording{{file: "a.mp4", hr: 61, br: nan, rmssd: nan}}},
		{name: "breathing and HRV, an empty cell for none", csv: "file,hr,br,rmssd\na.mp4,61,14.5,\nb.webm,70,,38\n",
			want: []recording{{file: "a.mp4", hr: 61, br: 14.5, rmssd: nan}, {file: "b.webm", hr: 70, br: nan, rmssd: 38}}},
		{name: "hr empty", csv: "file,hr\na.mp4,\n", err: `line 2: hr "" is not a heart rate in bpm`},
		{name: "br not a number", csv: "file,hr,br\na.mp4,70,fast\n", err: `line 2: br "fast" is not a breathing rate`},
		{name: "rmssd negative", csv: "file,hr,rmssd\na.mp4,70,-3\n", err: `line 2: rmssd "-3" is not an RMSSD in ms`},
		{name: "empty", csv: "", err: "is empty"},
		{name: "header alone", csv: "file,hr\n", err: "lists no recordings"},
		{name: "no hr column", csv: "file,bpm\na.mp4,70\n", err: "lacks the column file or hr"},
		{name: "hr not a number", csv: "file,hr\na.mp4,seventy\n", err: `line 2: hr "seventy"`},
		{name: "hr zero", csv: "file,hr\na.mp4,0\n", err: `line 2: hr "0"`},
		{name: "hr NaN", csv: "file,hr\na.mp4,NaN\n", err: `line 2: hr "NaN"`},
		{name: "hr infinite", csv: "file,hr\na.mp4,+Inf\n", err: `line 2: hr "+Inf"`},
		{name: "missing video", csv: "file,hr\na.mp4,70\nc.mp4,70\n", err: "line 3: no file c.mp4"},
		{name: "a folder, not a video", csv: "file,hr\nsub,70\n", err: "line 2: no file sub"},
		{name: "no file", csv: "file,hr\n,70\n", err: "line 2: no file"},
		{name: "listed twice", csv: "file,hr\na.mp4,70\nb.webm,80\na.mp4,71\n", err: "line 4: a.mp4 is listed on line 2 already"},
		{name: "short row", csv: "file,hr,group\na.mp4,70\n", err: "wrong number of fields"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range []string{"a.mp4", "b.webm"} {
				if err := os.WriteFile(filepath.Join(dir, f), []byte("video"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, referencesFile), []byte(tc.csv), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := readReferences(dir)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
			for i, g := range got {
				w := tc.want[i]
				if g.file != w.file || g.group != w.group || !same(g.hr, w.hr) || !same(g.br, w.br) || !same(g.rmssd, w.rmssd) {
					t.Errorf("row %d: %+v, want %+v", i, g, w)
				}
			}
		})
	}
	if _, err := readReferences(t.TempDir()); err == nil || !strings.Contains(err.Error(), referencesFile) {
		t.Errorf("a folder without %s: error %v", referencesFile, err)
	}
}

// TestOwnRecordings scores two generated videos as one's own recordings:
// the references come from reference.csv, not from the clips' truth (one
// is listed 30 bpm off), and each group gets its row.
func TestOwnRecordings(t *testing.T) {
	dir := t.TempDir()
	presets := []clip.Preset{
		{Name: "a", Config: clip.Config{Width: 320, Height: 240, FPS: 15, Seconds: 20, HeartRate: 66, Seed: 3}, Encoding: clip.Encoding{Format: "mp4"}},
		{Name: "b", Config: clip.Config{Width: 320, Height: 240, FPS: 15, Seconds: 20, HeartRate: 96, Seed: 4}, Encoding: clip.Encoding{Format: "mov"}},
	}
	truths, err := clip.Generate(context.Background(), dir, presets, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	csv := "file,hr,br,group\n" +
		"a.mp4," + bpm(truths[0].HeartRate) + "," + bpm(truths[0].BreathingRate) + ",as measured\n" +
		"b.mov," + bpm(truths[1].HeartRate+30) + ",,listed 30 bpm high\n"
	if err := os.WriteFile(filepath.Join(dir, referencesFile), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	tb, ct, err := ownRecordings(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if tb.units != 2 || len(tb.outcomes) != 2 {
		t.Fatalf("%d recordings scored, %d outcomes, want 2", tb.units, len(tb.outcomes))
	}
	want := map[string]float64{"all recordings": math.NaN(), "group as measured": 0, "group listed 30 bpm high": -30}
	if len(ct.rows) != len(want) {
		t.Fatalf("rows %v, want %d", ct.rows, len(want))
	}
	for _, r := range ct.rows {
		off, ok := want[r.name]
		if !ok {
			t.Errorf("row %q", r.name)
			continue
		}
		if math.IsNaN(off) {
			if r.clips != 2 {
				t.Errorf("%s: %d clips, want 2", r.name, r.clips)
			}
			continue
		}
		if r.clips != 1 || len(r.errs) != 1 {
			t.Fatalf("%s: %d clips, %d answered (refused: %v), want 1 answered", r.name, r.clips, len(r.errs), r.refusals)
		}
		if math.Abs(r.errs[0]-off) > 5 {
			t.Errorf("%s: off by %.1f bpm, want %.0f", r.name, r.errs[0], off)
		}
	}
	var out strings.Builder
	tb.print(&out)
	for _, want := range []string{"| " + dsp.HR + " | 100% | 2/2 |", "| " + dsp.BR + " |", "the hr, br columns"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in the table:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "| "+dsp.HRV+" |") {
		t.Errorf("an hrv row without an rmssd column:\n%s", out.String())
	}
	if n := len(tb.pairs[dsp.BR]); n > 1 {
		t.Errorf("%d breathing rates scored, but one recording has a reference", n)
	}
}

// TestOwnSignals scores signal files as one's own recordings: a camera's
// colours and a contact sensor's intensity, each with a pulse of known
// rate, are answered at that rate; a file that is not a signal stops the
// run with its name and the fault.
func TestOwnSignals(t *testing.T) {
	const fps, seconds = 30.0, 30.0
	rng := rand.New(rand.NewPCG(5, 6))
	var ts, r, g, b, v []float64
	for i := range int(fps * seconds) {
		s := float64(i) / fps
		ts = append(ts, 1000*s)
		face := 0.003 * math.Sin(2*math.Pi*72.0/60*s) // the skin's blood-volume signature
		r = append(r, 150*(1+0.43*face)+0.05*rng.NormFloat64())
		g = append(g, 110*(1+face)+0.05*rng.NormFloat64())
		b = append(b, 90*(1+0.69*face)+0.05*rng.NormFloat64())
		v = append(v, 100+math.Sin(2*math.Pi*66.0/60*s)+0.05*rng.NormFloat64())
	}
	signal := func(members map[string][]float64) string {
		j, err := json.Marshal(map[string]any{"signal": members, "tags": []string{"ignored"}})
		if err != nil {
			t.Fatal(err)
		}
		return string(j)
	}
	files := map[string]string{
		"face.JSON":   signal(map[string][]float64{"timestamps": ts, "r": r, "g": g, "b": b}),
		"finger.json": signal(map[string][]float64{"timestamps": ts, "values": v}),
	}
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range files {
		write(name, content)
	}
	write(referencesFile, "file,hr,group\nface.JSON,72,camera\nfinger.json,66,contact\n")
	tb, ct, err := ownRecordings(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if tb.units != 2 || len(tb.outcomes) != 2 {
		t.Fatalf("%d recordings scored, %d outcomes, want 2", tb.units, len(tb.outcomes))
	}
	for _, row := range ct.rows {
		if row.name == "all recordings" {
			continue
		}
		if len(row.errs) != 1 || math.Abs(row.errs[0]) > 1 {
			t.Errorf("%s: errors %v (refused: %v), want one within 1 bpm", row.name, row.errs, row.refusals)
		}
		if want := map[string]int{"group camera": 1, "group contact": 0}[row.name]; len(row.plain) != want {
			t.Errorf("%s: %d plain readings, want %d (none for a contact signal)", row.name, len(row.plain), want)
		}
	}
	if !strings.Contains(tb.title, ": 2 recordings in ") {
		t.Errorf("title %q, want it to count 2 recordings", tb.title)
	}
	write(referencesFile, "file,hr\nfinger.json,66\n")
	if tb, _, err := ownRecordings(dir, false); err != nil || !strings.Contains(tb.title, ": 1 recording in ") {
		t.Errorf("one recording listed: error %v, want a title counting 1 recording", err)
	}

	for _, tc := range []struct{ name, content, err string }{
		{"broken.json", `{"signal": {"timestamps": [0, 33`, "broken.json: unexpected end of JSON input"},
		{"nosignal.json", `{"timestamps": [0, 33], "values": [1, 2]}`, "nosignal.json: no signal member"},
		{"unequal.json", `{"signal": {"timestamps": [0, 33, 66], "r": [1, 2, 3], "g": [1, 2], "b": [1, 2, 3]}}`, "unequal.json: invalid signal"},
		{"backwards.json", `{"signal": {"timestamps": [0, 33, 20], "values": [1, 2, 3]}}`, "backwards.json: invalid signal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			write(tc.name, tc.content)
			write(referencesFile, "file,hr\nfinger.json,66\n"+tc.name+",70\n")
			if _, _, err := ownRecordings(dir, false); err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %v, want one saying %q", err, tc.err)
			}
		})
	}
}
