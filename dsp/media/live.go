package media

import (
	"context"
	"io"
)

// liveInputArgs make ffmpeg decode a live stream as it arrives. By default
// it first reads up to 5 MB or 5 s of input to learn the stream, which at a
// WebRTC rate of about 1.5 Mbit/s holds the first frame back for many
// seconds; an IVF header already names the codec and size. (-fflags nobuffer
// is no help: it drops the frames read while probing, the key frame among
// them, and ffmpeg 5.1 then fails to decode what follows.) One decoding
// thread: frame threads would each hold a frame back, and a server decoding
// many sessions at once has no idle core to give them.
var liveInputArgs = []string{"-probesize", "32", "-analyzeduration", "0", "-threads", "1"}

// liveOutputArgs let a frame leave at its own size when the picture changes
// size: ffmpeg would otherwise rescale it, bicubic, to the first frame's
// size after showinfo has logged the new one, and the pixels would no
// longer match their logged size.
var liveOutputArgs = []string{"-autoscale", "0"}

// DecodeLive decodes a live video stream read from r while it is being
// written, such as the IVF stream pion's ivfwriter makes of a WebRTC track,
// and calls fn with each frame as soon as ffmpeg has decoded it. It is
// DecodeVideo with two differences: ffmpeg does not wait for more input
// than one frame before decoding, and the picture may change size
// mid-stream (a browser lowers its resolution when the link or its CPU is
// short), so a Frame's size is that of its own image. The options bound it
// as they bound a file: set Timeout and MaxBytes to the longest stream
// expected. The decode ends when r returns io.EOF, ctx ends or fn fails.
func DecodeLive(ctx context.Context, r io.Reader, opt VideoOptions, fn func(Frame) error) (VideoInfo, error) {
	opt.live = true
	return DecodeVideo(ctx, r, opt, fn)
}
