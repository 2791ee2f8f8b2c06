package control

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"testing"

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
	if want := "signal.values.1800000: at most 1800000 samples"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("%v, want %q", err, want)
	}
}

// FuzzDecodeSignal: any body is decoded or refused as a validation error,
// never a panic, and what is decoded validates or is refused likewise.
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
		if err := b.Validate(); err != nil && ErrorCode(err) != Invalid {
			t.Fatalf("validate: %v", err)
		}
	})
}
