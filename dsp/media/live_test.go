package media

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"testing"
	"time"
)

// ivfFrames splits an IVF file into its 32-byte header and its frames
// (each with its 12-byte frame header).
func ivfFrames(t *testing.T, data []byte) (header []byte, frames [][]byte) {
	t.Helper()
	if len(data) < 32 || string(data[:4]) != "DKIF" {
		t.Fatal("not an IVF file")
	}
	header, data = data[:32], data[32:]
	for len(data) >= 12 {
		n := 12 + int(binary.LittleEndian.Uint32(data))
		if n > len(data) {
			t.Fatal("truncated IVF frame")
		}
		frames, data = append(frames, data[:n]), data[n:]
	}
	return header, frames
}

// vp8IVF makes a 1-second 30 fps VP8 IVF clip of ffmpeg's test pattern.
func vp8IVF(t *testing.T, size string) []byte {
	t.Helper()
	path := makeVideo(t, "s.ivf", "-f", "lavfi", "-i", "testsrc=size="+size+":rate=30:duration=1", "-c:v", "libvpx", "-g", "30", "-f", "ivf")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestDecodeLiveStreams: frames come out while the stream is still being
// written (a plain DecodeVideo would wait for megabytes of input first).
func TestDecodeLiveStreams(t *testing.T) {
	header, frames := ivfFrames(t, vp8IVF(t, "320x240"))
	r, w := io.Pipe()
	first := make(chan struct{})
	go func() {
		w.Write(header)
		for _, f := range frames[:5] {
			w.Write(f)
		}
		select {
		case <-first:
		case <-time.After(30 * time.Second):
			// No frame came out of a live decode that has five
			// frames to work with: close, and the test fails below.
		}
		for _, f := range frames[5:] {
			w.Write(f)
		}
		w.Close()
	}()
	var times []time.Duration
	info, err := DecodeLive(context.Background(), r, VideoOptions{}, func(f Frame) error {
		if len(times) == 0 {
			close(first)
		}
		times = append(times, f.Time)
		if b := f.Image.Bounds(); b.Dx() != 320 || b.Dy() != 240 {
			t.Errorf("frame %d is %v", f.Index, b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-first:
	default:
		t.Fatal("no frame was delivered")
	}
	if info.Frames != len(frames) {
		t.Fatalf("%d frames decoded, want %d", info.Frames, len(frames))
	}
	if last := times[len(times)-1]; last < 950*time.Millisecond || last > 990*time.Millisecond {
		t.Errorf("last frame at %v, want 29/30 s", last)
	}
}

// TestDecodeLiveSizeChange: a stream whose picture shrinks mid-way (a key
// frame at the new size, as a browser sends when it adapts) decodes on
// with frames of the new size live, and is refused as a file.
func TestDecodeLiveSizeChange(t *testing.T) {
	header, big := ivfFrames(t, vp8IVF(t, "320x240"))
	_, small := ivfFrames(t, vp8IVF(t, "160x120"))
	var stream bytes.Buffer
	stream.Write(header)
	for i, f := range append(big, small...) {
		g := bytes.Clone(f)
		binary.LittleEndian.PutUint64(g[4:], uint64(i)) // one frame per time-base tick
		stream.Write(g)
	}
	var sizes []int
	info, err := DecodeLive(context.Background(), bytes.NewReader(stream.Bytes()), VideoOptions{}, func(f Frame) error {
		sizes = append(sizes, f.Image.Bounds().Dx())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if info.Frames != len(big)+len(small) || sizes[0] != 320 || sizes[len(sizes)-1] != 160 || info.Width != 160 {
		t.Fatalf("%d frames (want %d), first %d wide, last %d, info %+v", info.Frames, len(big)+len(small), sizes[0], sizes[len(sizes)-1], info)
	}
	_, err = DecodeVideo(context.Background(), bytes.NewReader(stream.Bytes()), VideoOptions{}, func(Frame) error { return nil })
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("as a file: %v, want ErrCorrupt", err)
	}
}
