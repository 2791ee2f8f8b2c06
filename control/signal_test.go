package control

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pulsewire/pulsewire/dsp"
)

func TestDecodeSignal(t *testing.T) {
	b, err := DecodeSignal(strings.NewReader(`{"tags":["a"], "signal": {"values":[1,2.5,-3e2],"timestamps":[0,10,20]}, "userData":{"age":40}}`))
	if err != nil {
		t.Fatal(err)
	}
	if b.PPG == nil || b.Trace != nil || b.Kind() != "cppg" || len(b.PPG.Values) != 3 || b.PPG.Values[2] != -300 || b.PPG.TimestampsMs[1] != 10 {
		t.Fatalf("decoded %+v", b)
	}
	if string(b.Inputs) != `{"tags":["a"],"userData":{"age":40}}` {
		t.Fatalf("inputs %s", b.Inputs)
	}
	b, err = DecodeSignal(strings.NewReader(`{"signal":{"timestamps":[],"r":[],"g":[],"b":[]}}`))
	if err != nil || b.Trace == nil || b.Kind() != "rppg" || b.Inputs != nil {
		t.Fatalf("empty camera trace %+v %v", b, err)
	}
}

// numbers is a JSON array of n small numbers.
func numbers(n int) io.Reader {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i % 10))
	}
	b.WriteByte(']')
	return &b
}

// TestDecodeSignalSampleLimit reads one sample more than dsp.MaxSamples:
// the refusal names the sample past the limit, so every sample up to the
// limit was taken (one parse shows both sides of the edge).
func TestDecodeSignalSampleLimit(t *testing.T) {
	body := io.MultiReader(strings.NewReader(`{"signal":{"values":`), numbers(dsp.MaxSamples+1), strings.NewReader(`}}`))
	_, err := DecodeSignal(body)
	if want := fmt.Sprintf("signal.values.%d: at most %d samples", dsp.MaxSamples, dsp.MaxSamples); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("%v, want %q", err, want)
	}
}

// FuzzDecodeSignal: any body is decoded or refused as a validation error,
// never a panic, and what is decoded validates or is refused likewise; a
// body taken is one JSON object, so cut inside it, it is refused as cut
// short.
func FuzzDecodeSignal(f *testing.F) {
	f.Add(`{"signal":{"timestamps":[0,33.3,66.7],"r":[1,2,3],"g":[1,2,3],"b":[1,2,3]},"tags":["x"]}`)
	f.Add(`{"signal":{"timestamps":[0,10],"values":[1,2]},"userData":{"age":40}}`)
	f.Add(`{"signal":{"timestamps":[0,0],"values":[1,NaN]}}`)
	f.Add(`{"signal":{"timestamps":[1e999],"values":[null]}} []`)
	f.Add(`{"signal":{"timestamps":[0],"g":[1]},"signal":{}}`)
	f.Fuzz(func(t *testing.T, body string) {
		b, err := DecodeSignal(strings.NewReader(body))
		if err != nil {
			if ErrorCode(err) != Invalid {
				t.Fatalf("error %v is not a validation error", err)
			}
			return
		}
		if (b.PPG == nil) == (b.Trace == nil) {
			t.Fatalf("decoded %+v: want exactly one trace", b)
		}
		whole := strings.TrimRight(body, " \t\r\n")
		for _, n := range []int{len(whole) / 2, len(whole) - 1} {
			if _, err := DecodeSignal(strings.NewReader(whole[:n])); err == nil || !strings.Contains(err.Error(), "ends too early") {
				t.Fatalf("%q cut to %d bytes: %v, want it cut short", body, n, err)
			}
		}
		if err := b.Validate(); err != nil && ErrorCode(err) != Invalid {
			t.Fatalf("validate: %v", err)
		}
	})
}

// repeated reads s n times, without holding the whole in memory.
type repeated struct {
	s    string
	n    int
	part []byte
}

func (r *repeated) Read(p []byte) (int, error) {
	read := 0
	for read < len(p) {
		if len(r.part) == 0 {
			if r.n == 0 {
				break
			}
			r.part, r.n = []byte(r.s), r.n-1
		}
		c := copy(p[read:], r.part)
		r.part, read = r.part[c:], read+c
	}
	if read == 0 {
		return 0, io.EOF
	}
	return read, nil
}

// TestDecodeSignalCutShort: a body that ends inside a value is told as cut
// short wherever it ends, whichever encoding/json the server is built with
// (the one built on encoding/json/v2 reports some of these as syntax
// errors at the input's end, not as io.EOF).
func TestDecodeSignalCutShort(t *testing.T) {
	const whole = `{"signal":{"timestamps":[0,10],"values":[1,2]},"tags":["a","b"],"userData":{"externalId":"x"}}`
	for n := 1; n < len(whole); n++ {
		_, err := DecodeSignal(strings.NewReader(whole[:n]))
		if err == nil || ErrorCode(err) != Invalid || !strings.Contains(err.Error(), "ends too early") {
			t.Errorf("%s: %v, want it to end too early", whole[:n], err)
		}
	}
	if _, err := DecodeSignal(strings.NewReader(whole)); err != nil {
		t.Fatalf("whole: %v", err)
	}
	for _, body := range []string{`{"signal":{"values":[1,x`, `{"signal":{"values":[1]} x`, `{"tags":["a" "b"]`} {
		if _, err := DecodeSignal(strings.NewReader(body)); err == nil || strings.Contains(err.Error(), "ends too early") {
			t.Errorf("%s: %v, want it refused for what it holds", body, err)
		}
	}
}

// TestDecodeSignalBounds: the body streams, and each bound is checked as
// the body passes it: at a bound the body is taken, one past it it is
// refused, and the decoder has read no more than a window beyond the
// point where it was refused (never the rest of a 40 MB body).
func TestDecodeSignalBounds(t *testing.T) {
	signal := `"signal":{"timestamps":[0,10],"values":[1,2]}`
	big := 40 << 20
	cases := []struct {
		name  string
		body  func() io.Reader
		want  string // "" for taken
		reads int64  // at most, for a refusal
	}{
		// The inputs' own rules are checked after, by ParseMeasureInput.
		{"1000 tags", func() io.Reader {
			return io.MultiReader(strings.NewReader(`{`+signal+`,"tags":["t"`), &repeated{s: `,"t"`, n: maxTags - 1}, strings.NewReader(`]}`))
		}, "", 0},
		{"1001 tags of 2 million", func() io.Reader {
			return io.MultiReader(strings.NewReader(`{`+signal+`,"tags":["t"`), &repeated{s: `,"t"`, n: 2_000_000}, strings.NewReader(`]}`))
		}, "tags must contain no more than 1000 elements", 64 << 10},
		// The inputs' bytes count from the comma before each member to
		// the end of its value.
		{"inputs at their bound", func() io.Reader {
			pad := maxJSONBody - len(`,"userData":{"externalId":""}`)
			return strings.NewReader(`{` + signal + `,"userData":{"externalId":"` + strings.Repeat("x", pad) + `"}}`)
		}, "", 0},
		{"inputs one byte past it", func() io.Reader {
			pad := maxJSONBody - len(`,"userData":{"externalId":""}`) + 1
			return strings.NewReader(`{` + signal + `,"userData":{"externalId":"` + strings.Repeat("x", pad) + `"}}`)
		}, "the members beside signal must hold at most 1048576 bytes together", maxJSONBody + 64<<10},
		{"1000 tags over the bound together", func() io.Reader {
			tag := `,"` + strings.Repeat("t", 2<<10) + `"`
			return io.MultiReader(strings.NewReader(`{`+signal+`,"tags":["t"`), &repeated{s: tag, n: maxTags - 1}, strings.NewReader(`]}`))
		}, "the members beside signal must hold at most", maxJSONBody + 64<<10},
		{"a 40 MB tag", func() io.Reader {
			return io.MultiReader(strings.NewReader(`{"tags":["`), &repeated{s: "x", n: big}, strings.NewReader(`"],`+signal+`}`))
		}, "the members beside signal must hold at most", maxJSONBody + 64<<10},
		{"a 40 MB number", func() io.Reader {
			return io.MultiReader(strings.NewReader(`{"signal":{"values":[1`), &repeated{s: "0", n: big}, strings.NewReader(`]}}`))
		}, "a value is over 65536 bytes", 2 * sampleWindow},
		{"40 MB of blanks", func() io.Reader {
			return io.MultiReader(strings.NewReader(`{"signal":{"values":[1,`), &repeated{s: " ", n: big}, strings.NewReader(`2]}}`))
		}, "a value is over 65536 bytes", 2 * sampleWindow},
		{"an unknown member", func() io.Reader {
			return io.MultiReader(strings.NewReader(`{"x":[`), &repeated{s: "1,", n: big}, strings.NewReader(`1],`+signal+`}`))
		}, "property x should not exist", 64 << 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &countingReader{r: tc.body()}
			b, err := DecodeSignal(r)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "" && strings.Contains(tc.name, "tags"):
				if n, err := ParseMeasureInput(b.Inputs, time.Now()); err != nil || len(n.Tags) != maxTags {
					t.Fatalf("inputs: %d tags, %v", len(n.Tags), err)
				}
			case tc.want == "":
			case err == nil || !strings.Contains(err.Error(), tc.want) || ErrorCode(err) != Invalid:
				t.Fatalf("%v, want Invalid %q", err, tc.want)
			case r.n.Load() > tc.reads:
				t.Fatalf("read %d bytes before refusing, want at most %d", r.n.Load(), tc.reads)
			}
		})
	}
}
