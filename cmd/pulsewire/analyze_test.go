package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pulsewire/pulsewire/dsp"
	"github.com/pulsewire/pulsewire/dsp/media"
	"github.com/pulsewire/pulsewire/scripts/synth/clip"
)

// result is the printed JSON, read back loosely.
type result struct {
	Variables map[string]struct {
		Value json.RawMessage `json:"value"`
		Error *string         `json:"error"`
	} `json:"variables"`
	Signal *struct {
		QualityScore struct {
			Value *float64 `json:"value"`
			Error *string  `json:"error"`
		} `json:"qualityScore"`
	} `json:"signal"`
}

func (r result) mean(t *testing.T, name string) float64 {
	t.Helper()
	v, ok := r.Variables[name]
	if !ok {
		t.Fatalf("no %s in %v", name, r.Variables)
	}
	if v.Error != nil {
		t.Fatalf("%s: error %s", name, *v.Error)
	}
	var m struct{ Mean float64 }
	if err := json.Unmarshal(v.Value, &m); err != nil {
		t.Fatalf("%s: %s: %v", name, v.Value, err)
	}
	return m.Mean
}

func analyze(t *testing.T, args ...string) (result, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), append([]string{"analyze"}, args...), &stdout, &stderr)
	var r result
	if err == nil && stdout.Len() > 0 {
		if jerr := json.Unmarshal(stdout.Bytes(), &r); jerr != nil {
			t.Fatalf("output is not JSON: %v\n%s", jerr, stdout.String())
		}
	}
	return r, stderr.String(), err
}

func TestAnalyzeVideo(t *testing.T) {
	c, err := clip.New(clip.Config{Width: 320, Height: 240, Seconds: 20, HeartRate: 75, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "face.mp4")
	truth, err := c.Encode(context.Background(), path, clip.Encoding{Format: "mp4", CRF: 18})
	if err != nil {
		t.Fatal(err)
	}
	r, progress, err := analyze(t, path, "--user-data", "weight=70", "--user-data", "height=175")
	if err != nil {
		t.Fatal(err)
	}
	if hr := r.mean(t, "hr"); math.Abs(hr-truth.HeartRate) > 5 {
		t.Errorf("hr %.1f, truth %.1f", hr, truth.HeartRate)
	}
	if v := r.Variables["faceBmi"]; v.Error == nil || *v.Error != "MISSING_IMAGE" {
		t.Errorf("faceBmi from a video: %s %v, want MISSING_IMAGE", v.Value, v.Error)
	}
	if v := r.Variables["bmi"]; string(v.Value) != "22.9" {
		t.Errorf("bmi %s, want 22.9 (70 kg, 175 cm)", v.Value)
	}
	if r.Signal == nil {
		t.Error("no signal object for a video")
	}
	for _, want := range []string{"analyzed 5 s of 20 s", "mp4: 600 frames"} {
		if !strings.Contains(progress, want) {
			t.Errorf("progress lacks %q:\n%s", want, progress)
		}
	}

	// The same video turned upside down (a phone held the other way) reads
	// the same heart rate.
	turned := filepath.Join(t.TempDir(), "turned.mp4")
	if out, err := exec.Command("ffmpeg", "-nostdin", "-loglevel", "error", "-i", path, "-vf", "hflip,vflip",
		"-c:v", "libx264", "-crf", "18", turned).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, out)
	}
	r, _, err = analyze(t, turned, "-variables", "hr", "-quiet")
	if err != nil {
		t.Fatal(err)
	}
	if hr := r.mean(t, "hr"); math.Abs(hr-truth.HeartRate) > 5 {
		t.Errorf("upside down: hr %.1f, truth %.1f", hr, truth.HeartRate)
	}
}

func TestAnalyzeImages(t *testing.T) {
	photo, err := clip.FacePhoto()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "face.png")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, photo); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// Three images, the most a measure takes.
	r, _, err := analyze(t, path, path, path, "-user-data", "weight=70", "-user-data", "height=175")
	if err != nil {
		t.Fatal(err)
	}
	var bmi float64
	if v := r.Variables["faceBmi"]; v.Error != nil || json.Unmarshal(v.Value, &bmi) != nil || bmi < 15 || bmi > 35 {
		t.Errorf("faceBmi %s %v, want a plausible value", v.Value, v.Error)
	}
	if v := r.Variables["hr"]; v.Error == nil || *v.Error != "MISSING_CAPTURES" {
		t.Errorf("hr from images: %s %v, want MISSING_CAPTURES", v.Value, v.Error)
	}
	if r.Signal != nil {
		t.Error("signal from images, want null")
	}
	// Four, as the images route answers them: faceBmi says why, the rest
	// is measured.
	r, _, err = analyze(t, path, path, path, path, "-user-data", "weight=70", "-user-data", "height=175")
	if err != nil {
		t.Fatalf("four images: %v", err)
	}
	if v := r.Variables["faceBmi"]; v.Error == nil || *v.Error != "EXCEEDING_MAX_IMAGE" {
		t.Errorf("four images: faceBmi %s %v, want EXCEEDING_MAX_IMAGE", v.Value, v.Error)
	}
	if v := r.Variables["bmi"]; v.Error != nil || string(v.Value) != "22.9" {
		t.Errorf("four images: bmi %s %v, want 22.9", v.Value, v.Error)
	}
}

// writeSignal writes a signal body with a pulse at hz for seconds at 30
// samples a second: rppg (r, g, b) or cppg (values).
func writeSignal(t *testing.T, kind string, hz, seconds float64) string {
	t.Helper()
	n := int(seconds * 30)
	ts := make([]float64, n)
	r, g, b, v := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		ts[i] = float64(i) * 1000 / 30
		p := math.Sin(2 * math.Pi * hz * float64(i) / 30)
		r[i], g[i], b[i] = 180-0.3*p, 120-0.8*p, 90-0.5*p
		v[i] = 200 - 3*p
	}
	sig := map[string]any{"timestamps": ts, "r": r, "g": g, "b": b}
	if kind == "cppg" {
		sig = map[string]any{"timestamps": ts, "values": v}
	}
	data, err := json.Marshal(map[string]any{"signal": sig})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), kind+".json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAnalyzeSignal(t *testing.T) {
	cases := []struct {
		name string
		kind string
		args []string
		keys int // variables printed
	}{
		{"camera trace", "rppg", nil, 10},
		{"contact trace", "cppg", nil, 10},
		{"narrowed", "rppg", []string{"-variables", "hr,bmi", "-user-data", "weight=80", "-user-data", "height=180"}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeSignal(t, tc.kind, 1.2, 30)
			r, _, err := analyze(t, append([]string{path}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			if hr := r.mean(t, "hr"); math.Abs(hr-72) > 1 {
				t.Errorf("hr %.2f, want 72 (a 1.2 Hz pulse)", hr)
			}
			if len(r.Variables) != tc.keys {
				t.Errorf("%d variables, want %d: %v", len(r.Variables), tc.keys, r.Variables)
			}
		})
	}
}

// TestAnalyzeUserDataAsTheAPI: the person's data reach the analysis as a
// measure's userData does, by the same rules: a date of birth written as a
// timestamp gives an age, and an externalId of digits is a string.
func TestAnalyzeUserDataAsTheAPI(t *testing.T) {
	path := writeSignal(t, "rppg", 1.2, 30)
	r, _, err := analyze(t, path, "-quiet", "-variables", "bmi,bp,healthScore",
		"-user-data", "weight=80", "-user-data", "height=180", "-user-data", "externalId=123",
		"-user-data", "dateOfBirth=1980-06-01T00:00:00Z", "-user-data", "sex=M", "-user-data", "smokingStatus=non-smoker")
	if err != nil {
		t.Fatal(err)
	}
	if bmi := r.Variables["bmi"]; string(bmi.Value) != "24.7" {
		t.Errorf("bmi %s (error %v), want 24.7", bmi.Value, bmi.Error)
	}
	if bp := r.Variables["bp"]; bp.Error == nil || *bp.Error != "NOT_CALIBRATED" {
		t.Errorf("bp %+v: want NOT_CALIBRATED, as a person with an externalId and no calibration", bp)
	}
}

func TestAnalyzeRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	signal := writeSignal(t, "rppg", 1.2, 12)
	cases := []struct {
		name string
		args []string
		want string // in the error
	}{
		{"no file", nil, "usage"},
		{"missing file", []string{filepath.Join(dir, "nope.mp4")}, "no such file"},
		{"empty file", []string{write("nothing.mp4", "")}, "empty"},
		{"text file", []string{write("notes.txt", "hello there, not a video")}, "not a video, image or signal"},
		{"broken video", []string{write("cut.mp4", "\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomavc1")}, "corrupt"},
		{"signal without signal", []string{write("s.json", `{"userData":{}}`)}, "signal is required"},
		{"signal both kinds", []string{write("b.json", `{"signal":{"timestamps":[1,2],"values":[1,2],"g":[1,2]}}`)}, "not both"},
		{"signal uneven lengths", []string{write("u.json", `{"signal":{"timestamps":[1,2,3],"values":[1,2]}}`)}, "signal: channel 0 has 2 values for 3 timestamps"},
		{"signal repeated time", []string{write("r.json", `{"signal":{"timestamps":[0,10,10],"values":[1,2,3]}}`)}, "signal: timestamp 2 (10 ms) does not follow 10 ms"},
		{"signal not json", []string{write("x.json", `{"signal":`)}, "ends too early"},
		{"signal not json at all", []string{write("y.json", `{"signal"}`)}, "the body is not valid JSON"},
		{"two signals", []string{signal, signal}, "one signal file"},
		{"unknown variable", []string{signal, "-variables", "hr,mood"}, "-variables must be one of the following values: hr, br,"},
		{"variable twice", []string{signal, "-variables", "hr,br,hr"}, "-variables: hr is given twice"},
		{"user data out of range", []string{signal, "-user-data", "age=17"}, "-user-data age must be an integer from 18 to 110"},
		{"user data not an integer", []string{signal, "-user-data", "weight=70.5"}, "-user-data weight must be an integer from 20 to 200"},
		{"user data unknown key", []string{signal, "-user-data", "shoeSize=44"}, "property shoeSize should not exist"},
		{"user data without a value", []string{signal, "-user-data", "age"}, "usage"}, // the flag package says why, on stderr
		{"age and date of birth", []string{signal, "-user-data", "age=40", "-user-data", "dateOfBirth=1980-01-01"}, "give age or dateOfBirth, not both"},
		{"too young by date of birth", []string{signal, "-user-data", "dateOfBirth=" + time.Now().AddDate(-17, 0, 0).Format(time.DateOnly)}, "must give an age from 18 to 110 (it gives 17)"},
		{"bad bpClass scale", []string{signal, "-bp-class-scale", "4"}, "-bp-class-scale must be 2 or 3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := analyze(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error with %q", err, tc.want)
			}
			// Said once: a reason repeated by a wrapped error reads as two.
			if n := strings.Count(err.Error(), tc.want); n != 1 {
				t.Errorf("%q said %d times in %q", tc.want, n, err)
			}
		})
	}
	// An image that cannot be decoded is measured as the images route
	// measures it: faceBmi says why.
	r, _, err := analyze(t, write("cut.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00"))
	if v := r.Variables["faceBmi"]; err != nil || v.Error == nil || *v.Error != "INVALID_IMAGE_TYPE" {
		t.Fatalf("broken image: faceBmi %+v, %v; want INVALID_IMAGE_TYPE", v, err)
	}
}

// TestAnalyzeExplainsRefusal: a heart rate not answered is explained on
// stderr (the code, how near a faint pulse came, what to try), an answered
// one is not, and -quiet keeps stderr empty.
func TestAnalyzeExplainsRefusal(t *testing.T) {
	dir := t.TempDir()
	all := func(int) bool { return true }
	trace := func(name string, seconds, level float64, seed uint64, keep func(frame int) bool) string {
		rng := rand.New(rand.NewPCG(seed, 1))
		sig := map[string][]float64{}
		for i := range int(seconds * 30) {
			if !keep(i) {
				continue
			}
			sig["timestamps"] = append(sig["timestamps"], float64(i)*1000/30)
			for _, c := range []string{"r", "g", "b"} {
				sig[c] = append(sig[c], level+0.3*rng.NormFloat64())
			}
		}
		data, err := json.Marshal(map[string]any{"signal": sig})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	noise, dark := trace("noise.json", 30, 120, 7, all), trace("dark.json", 30, 20, 8, all)
	slow := trace("slow.json", 30, 120, 9, func(i int) bool { return i%3 == 0 })       // 10 fps
	holes := trace("holes.json", 30, 120, 10, func(i int) bool { return i%120 >= 30 }) // 1 s of every 4
	// A contact trace at full scale in all but every 25th sample.
	flat := map[string][]float64{}
	for i := range 900 {
		flat["timestamps"] = append(flat["timestamps"], float64(i)*1000/30)
		v := 255.0
		if i%25 == 0 {
			v = 254.999
		}
		flat["values"] = append(flat["values"], v)
	}
	// The same samples timed in seconds instead of milliseconds.
	inSeconds := filepath.Join(dir, "seconds.json")
	secs := map[string][]float64{"values": flat["values"]}
	for _, ms := range flat["timestamps"] {
		secs["timestamps"] = append(secs["timestamps"], ms/1000)
	}
	if data, err := json.Marshal(map[string]any{"signal": secs}); err != nil || os.WriteFile(inSeconds, data, 0o600) != nil {
		t.Fatal("writing the trace timed in seconds", err)
	}
	clipped := filepath.Join(dir, "clipped.json")
	if data, err := json.Marshal(map[string]any{"signal": flat}); err != nil || os.WriteFile(clipped, data, 0o600) != nil {
		t.Fatal("writing the clipped trace", err)
	}
	cases := []struct {
		name string
		args []string
		want string // a regular expression stderr matches; "" for no explanation
	}{
		{"noise", []string{noise}, `hr not answered \(CONFORMITY_MISSING_SIGNAL\): confidence 0\.\d\d, under the 0\.84 a capture of 30 s needs\. The pulse is too faint: face the light and hold still\.\n$`},
		{"too short", []string{writeSignal(t, "rppg", 1.2, 8)}, `hr not answered \(CONFORMITY_INITIALISATION\): it needs 10 s of capture, this one spans 8\.0 s\.\n$`},
		{"too dark", []string{dark}, `hr not answered \(CONFORMITY_POOR_LIGHT\)\. Find more even light on your face\.\n$`},
		{"too few frames", []string{slow}, `hr not answered \(CONFORMITY_LOW_FPS\): 10\.0 frames a second on average, 10\.0 at the median interval; it needs 12\. The camera delivers too few frames\.\n$`},
		{"holes", []string{holes}, `hr not answered \(CONFORMITY_LOW_FPS\): 7\.2 s of its 29\.0 s lie in holes of 0\.25 s or more without a frame, more than a fifth\. The camera delivers too few frames\.\n$`},
		{"clipped", []string{clipped}, `hr not answered \(CONFORMITY_POOR_LIGHT\): 96% of its samples sit at one limit of the sensor, the pulse cut off\. Send a channel that the light neither saturates nor leaves at zero\.\n$`},
		{"answered", []string{writeSignal(t, "rppg", 1.2, 30)}, ""},
		{"hr not asked for", []string{noise, "-variables", "br"}, ""},
		{"quiet", []string{noise, "-quiet"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, err := analyze(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if strings.Contains(stderr, "not answered") {
					t.Errorf("stderr %q, want no explanation", stderr)
				}
			} else if !regexp.MustCompile(tc.want).MatchString(stderr) {
				t.Errorf("stderr %q, want it to match %s", stderr, tc.want)
			}
		})
	}
	// A signal timed in seconds is refused, as the API refuses it.
	if _, _, err := analyze(t, inSeconds); err == nil || !strings.Contains(err.Error(), "timestamps are milliseconds") {
		t.Errorf("a signal timed in seconds: %v", err)
	}
}

func TestAnalyzeHelp(t *testing.T) {
	stdout, _, err := pulsewire(t, "analyze", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Usage: pulsewire analyze FILE", "-user-data", "signal file"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

// TestUserDataFlag: each -user-data pair at the API's bounds of userData,
// and one past them.
func TestUserDataFlag(t *testing.T) {
	cases := []struct {
		kv   string
		ok   bool
		want string
	}{
		{"age=18", true, "{AgeYears:18 Sex: WeightKg:0 HeightCm:0 Smoking: HasExternalID:false}"},
		{"age=110", true, "{AgeYears:110 Sex: WeightKg:0 HeightCm:0 Smoking: HasExternalID:false}"},
		{"age=111", false, ""},
		{"weight=20", true, "{AgeYears:0 Sex: WeightKg:20 HeightCm:0 Smoking: HasExternalID:false}"},
		{"weight=201", false, ""},
		{"height=250", true, "{AgeYears:0 Sex: WeightKg:0 HeightCm:250 Smoking: HasExternalID:false}"},
		{"height=99", false, ""},
		{"sex=F", true, "{AgeYears:0 Sex:F WeightKg:0 HeightCm:0 Smoking: HasExternalID:false}"},
		{"sex=x", false, ""},
		{"smokingStatus=non-smoker", true, "{AgeYears:0 Sex: WeightKg:0 HeightCm:0 Smoking:non-smoker HasExternalID:false}"},
		{"externalId=" + strings.Repeat("é", 300), true, "{AgeYears:0 Sex: WeightKg:0 HeightCm:0 Smoking: HasExternalID:true}"},
		{"externalId=" + strings.Repeat("a", 301), false, ""},
		{"dateOfBirth=1900-01-01", false, ""},
		{"dateOfBirth=yesterday", false, ""},
		{"age", false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.kv[:min(len(tc.kv), 30)], func(t *testing.T) {
			f := userDataFlag{}
			var in dsp.Inputs
			err := f.Set(tc.kv)
			if err == nil {
				in, err = measureInputs(f, "", 3)
			}
			if (err == nil) != tc.ok {
				t.Fatalf("error %v, want ok %v", err, tc.ok)
			}
			if got := fmt.Sprintf("%+v", in.Person); tc.ok && got != tc.want {
				t.Fatalf("person %s, want %s", got, tc.want)
			}
		})
	}
}

// BenchmarkAnalyze720p measures, on one 30-second 1280x720 H.264 clip of a
// synthetic face, ffmpeg's decode alone and the whole analysis (decode,
// face tracking, pulse and every variable), each as a multiple of real time.
func BenchmarkAnalyze720p(b *testing.B) {
	c, err := clip.New(clip.Config{Width: 1280, Height: 720, Seconds: 30, Motion: 0.01, Seed: 9})
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "720p.mp4")
	if _, err := c.Encode(context.Background(), path, clip.Encoding{Format: "mp4", CRF: 20}); err != nil {
		b.Fatal(err)
	}
	realtime := func(b *testing.B) {
		b.ReportMetric(30/(b.Elapsed().Seconds()/float64(b.N)), "x-realtime")
	}
	b.Run("decode", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := media.DecodeVideoFile(context.Background(), path, media.VideoOptions{}, func(media.Frame) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
		realtime(b)
	})
	b.Run("analyze", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := analyzeVideo(context.Background(), path, dsp.Inputs{}, media.DefaultTimeout, io.Discard); err != nil {
				b.Fatal(err)
			}
		}
		realtime(b)
	})
}
