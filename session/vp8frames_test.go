package session

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pion/rtp"
	"github.com/pion/rtp/codecs"
	"github.com/pion/webrtc/v4/pkg/media/ivfreader"
)

// vp8TestFrames encodes 4 s of ffmpeg's test picture as VP8 at 15 fps with
// a key frame every 15 frames, and returns its frames.
func vp8TestFrames(t *testing.T) [][]byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.ivf")
	if out, err := exec.Command("ffmpeg", "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=15",
		"-t", "4", "-c:v", "libvpx", "-b:v", "400k", "-g", "15", "-f", "ivf", path).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	frames, _, _ := readIVF(t, b)
	return frames
}

// readIVF returns an IVF stream's frames and their times in its time base,
// from the first.
func readIVF(t *testing.T, b []byte) ([][]byte, []uint64, *ivfreader.IVFFileHeader) {
	t.Helper()
	r, h, err := ivfreader.NewWith(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var frames [][]byte
	var times []uint64
	for {
		f, fh, err := r.ParseNextFrame()
		if errors.Is(err, io.EOF) {
			for i := len(times) - 1; i >= 0; i-- {
				times[i] -= times[0]
			}
			return frames, times, h
		}
		if err != nil {
			t.Fatal(err)
		}
		frames, times = append(frames, f), append(times, fh.Timestamp)
	}
}

// packetize sends the frames as a browser does: small packets, sequence
// numbers that wrap soon, one frame every 6000 ticks of the 90 kHz clock.
func packetize(frames [][]byte) []*rtp.Packet {
	p := rtp.NewPacketizer(300, 96, 1, &codecs.VP8Payloader{}, rtp.NewFixedSequencer(65500), vp8ClockRate)
	var pkts []*rtp.Packet
	for _, f := range frames {
		pkts = append(pkts, p.Packetize(f, 6000)...)
	}
	return pkts
}

// TestVP8Frames: packets late or out of order make the same frames; a
// packet that never comes loses its frame and the inter frames after it
// until a key frame, which is asked for meanwhile.
func TestVP8Frames(t *testing.T) {
	frames := vp8TestFrames(t)
	if len(frames) != 60 || !isVP8KeyFrame(frames[0]) || isVP8KeyFrame(frames[1]) || !isVP8KeyFrame(frames[15]) {
		t.Fatalf("test clip: %d frames, key frames not every 15th", len(frames))
	}
	pkts := packetize(frames)
	if len(pkts) < 2*len(frames) {
		t.Fatalf("%d packets for %d frames: the frames should span packets", len(pkts), len(frames))
	}
	// first is the index of the first packet of frame i.
	first := func(i int) int {
		n := 0
		for _, p := range pkts {
			if p.Timestamp == pkts[0].Timestamp+uint32(6000*i) {
				return n
			}
			n++
		}
		t.Fatalf("no frame %d", i)
		return 0
	}
	// run pushes the packets in the given order and returns the frames
	// written, checking their times, and whether a key frame was wanted
	// after each packet.
	run := func(order []int) (got [][]byte, v *vp8Frames, wanted []bool) {
		var out bytes.Buffer
		v = newVP8Frames(&out)
		for _, i := range order {
			if err := v.push(pkts[i]); err != nil {
				t.Fatal(err)
			}
			wanted = append(wanted, v.wantKey)
		}
		got, times, h := readIVF(t, out.Bytes())
		if h.TimebaseNumerator != 1 || h.TimebaseDenominator != vp8ClockRate {
			t.Fatalf("time base %d/%d, want the RTP clock's", h.TimebaseNumerator, h.TimebaseDenominator)
		}
		for i, ts := range times {
			if ts%6000 != 0 || i > 0 && ts <= times[i-1] {
				t.Fatalf("frame %d at %d ticks, after %d", i, ts, times[max(i-1, 0)])
			}
		}
		return got, v, wanted
	}
	all := make([]int, len(pkts))
	for i := range all {
		all[i] = i
	}
	without := func(drop ...int) []int {
		return slices.DeleteFunc(slices.Clone(all), func(i int) bool { return slices.Contains(drop, i) })
	}
	same := func(name string, got [][]byte, want [][]byte) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d frames, want %d", name, len(got), len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("%s: frame %d differs", name, i)
			}
		}
	}

	// The last frame waits for a packet that would follow it.
	frames = frames[:len(frames)-1]
	got, v, _ := run(all)
	same("in order", got, frames)
	if v.skipped != 0 || v.wantKey {
		t.Errorf("in order: %d skipped, wantKey %v", v.skipped, v.wantKey)
	}

	// A resend after a NACK arrives behind the packets sent after it.
	late := slices.Clone(all)
	k := first(20) + 1
	late = slices.Insert(slices.Delete(late, k, k+1), k+6, k)
	late[3], late[4] = late[4], late[3]
	got, v, _ = run(late)
	same("late and swapped packets", got, frames)
	if v.skipped != 0 {
		t.Errorf("late packets: %d frames skipped", v.skipped)
	}

	// Frames 20 to 29 are lost with a middle packet of frame 20, or its
	// first or its last, never seen; frame 30 is a key frame.
	for name, k := range map[string]int{"middle": first(20) + 1, "first": first(20), "last": first(21) - 1} {
		got, v, wanted := run(without(k))
		same(name+" packet lost", got, slices.Concat(frames[:20], frames[30:]))
		if v.skipped == 0 || v.skipped > 9 {
			t.Errorf("%s packet lost: %d frames counted as skipped, want 1-9", name, v.skipped)
		}
		if !slices.Contains(wanted, true) || wanted[len(wanted)-1] {
			t.Errorf("%s packet lost: a key frame should be wanted until frame 30 only", name)
		}
	}

	// A resend that comes after its frame was given up is ignored: frames
	// 20-29 are lost as above, and the stream goes on.
	k = first(20) + 1
	tooLate := slices.Insert(without(k), first(40)-1, k)
	got, _, _ = run(tooLate)
	same("resend too late", got, slices.Concat(frames[:20], frames[30:]))

	// Padding, as a browser probes the bandwidth with when no RTX is
	// agreed, between frames and between a frame's packets, is no loss:
	// the same frames, none skipped.
	var padded []*rtp.Packet
	for i, p := range pkts {
		padded = append(padded, p)
		if i%3 == 0 && i < len(pkts)-1 {
			pad := &rtp.Packet{Header: p.Header, Payload: nil, PaddingSize: 200}
			pad.Marker, pad.Padding = false, true
			padded = append(padded, pad, pad)
		}
	}
	for i := range padded {
		h := padded[i].Header
		h.SequenceNumber = 65500 + uint16(i)
		padded[i] = &rtp.Packet{Header: h, Payload: padded[i].Payload, PaddingSize: padded[i].PaddingSize}
	}
	var out bytes.Buffer
	v = newVP8Frames(&out)
	for _, p := range padded {
		if err := v.push(p); err != nil {
			t.Fatal(err)
		}
	}
	got, _, _ = readIVF(t, out.Bytes())
	same("padding between frames", got, frames)
	if v.skipped != 0 || len(padded) < len(pkts)+20 {
		t.Errorf("padding: %d frames skipped, %d packets of padding", v.skipped, len(padded)-len(pkts))
	}

	// Chromium's bursts: 15 padding packets after a frame, with its
	// timestamp, then the next frame, of one packet in most frames here.
	p1 := rtp.NewPacketizer(1200, 96, 1, &codecs.VP8Payloader{}, rtp.NewFixedSequencer(0), vp8ClockRate)
	var burst []*rtp.Packet
	single := 0
	for _, f := range frames {
		ps := p1.Packetize(f, 6000)
		if len(ps) == 1 {
			single++
		}
		burst = append(burst, ps...)
		for range 15 {
			pad := &rtp.Packet{Header: ps[len(ps)-1].Header, PaddingSize: 255}
			pad.Marker, pad.Padding = false, true
			burst = append(burst, pad)
		}
	}
	out.Reset()
	v = newVP8Frames(&out)
	for i, p := range burst {
		h := p.Header
		h.SequenceNumber = 65000 + uint16(i)
		if err := v.push(&rtp.Packet{Header: h, Payload: p.Payload, PaddingSize: p.PaddingSize}); err != nil {
			t.Fatal(err)
		}
	}
	got, _, _ = readIVF(t, out.Bytes())
	same("padding bursts", got, frames[:len(frames)-1])
	if v.skipped != 0 || single < 10 {
		t.Errorf("padding bursts: %d frames skipped; %d frames of one packet, want 10 or more", v.skipped, single)
	}

	// A stream joined after its first key frame starts at the next one.
	got, _, _ = run(all[first(3):])
	same("joined late", got, frames[15:])
}
