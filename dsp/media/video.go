package media

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"time"
)

// Defaults of VideoOptions.
const (
	// DefaultMaxWidth and DefaultMaxHeight bound the delivered frames: 720p
	// arrives as 480x270, VGA as 480x360. A face filling a third of the
	// height is then 90 pixels tall, plenty for the detector; area averaging
	// keeps the skin means; and ffmpeg decodes a 30 s 720p clip about 16
	// times faster than real time on two cores, against 13 times at 640x360
	// (measured on a synthetic face clip).
	DefaultMaxWidth, DefaultMaxHeight = 480, 360
	// DefaultMaxBytes is the API's video upload limit.
	DefaultMaxBytes = 100 << 20
	// DefaultMaxFrames is ten minutes at 60 frames per second.
	DefaultMaxFrames = 36000
	// DefaultTimeout bounds one decode.
	DefaultTimeout = 5 * time.Minute
	// DefaultMaxVideoPixels bounds the coded picture of a video: 4K UHD
	// (3840x2160), what phones record at most. Decoding costs memory in
	// proportion (ffmpeg holds several pictures at once), and a picture of
	// a face gains nothing from more.
	DefaultMaxVideoPixels = 3840 * 2160
)

// VideoOptions bounds and shapes a decode. Zero fields take the defaults.
type VideoOptions struct {
	// MaxWidth and MaxHeight bound the delivered frame size: larger videos
	// are scaled down (never up) to fit, keeping their aspect ratio.
	MaxWidth, MaxHeight int
	MaxBytes            int64
	MaxFrames           int
	Timeout             time.Duration
	// MaxPixels bounds the coded picture (width times height) before
	// scaling: a file is probed and refused beyond it before any frame is
	// decoded, and ffmpeg's decoder is held to it too.
	MaxPixels int64
	// FFmpeg and FFprobe are the executables; empty means "ffmpeg" and
	// "ffprobe" on PATH.
	FFmpeg, FFprobe string

	// live is set by DecodeLive: read the input as it arrives and let the
	// picture size change (live.go).
	live bool
}

func (o VideoOptions) withDefaults() VideoOptions {
	o.MaxWidth = orDefault(o.MaxWidth, DefaultMaxWidth)
	o.MaxHeight = orDefault(o.MaxHeight, DefaultMaxHeight)
	o.MaxBytes = orDefault(o.MaxBytes, DefaultMaxBytes)
	o.MaxFrames = orDefault(o.MaxFrames, DefaultMaxFrames)
	o.Timeout = orDefault(o.Timeout, DefaultTimeout)
	o.MaxPixels = orDefault(o.MaxPixels, DefaultMaxVideoPixels)
	o.FFmpeg = cmp.Or(o.FFmpeg, "ffmpeg")
	o.FFprobe = cmp.Or(o.FFprobe, "ffprobe")
	return o
}

// orDefault returns v, or def when v is zero or negative.
func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Frame is one decoded video frame.
type Frame struct {
	// Image holds the pixels, limited-range 4:4:4 YCbCr, BT.709 or BT.601
	// (see YCbCr). It is valid only during the callback: a later frame is
	// decoded into the same buffer.
	Image *YCbCr
	// Time is the frame's presentation time since the first frame, from
	// the container's timestamps (not from an assumed frame rate).
	Time time.Duration
	// Index counts delivered frames from 0.
	Index int
	// Duration is the video's duration as the container states it, for
	// progress reports; 0 when unknown.
	Duration time.Duration
}

// VideoInfo summarises a finished decode.
type VideoInfo struct {
	Container     Container
	Frames        int           // delivered to the callback
	Width, Height int           // of the delivered frames
	LastTime      time.Duration // Time of the last frame
}

// DecodeVideoFile decodes the video file at path and calls fn with each
// frame in presentation order. fn's error stops the decode and is returned.
// The container is recognised from the content.
func DecodeVideoFile(ctx context.Context, path string, opt VideoOptions, fn func(Frame) error) (VideoInfo, error) {
	opt = opt.withDefaults()
	f, err := os.Open(path)
	if err != nil {
		return VideoInfo{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return VideoInfo{}, err
	}
	switch {
	case st.Size() == 0:
		return VideoInfo{}, ErrEmpty
	case st.Size() > opt.MaxBytes:
		return VideoInfo{}, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, st.Size(), opt.MaxBytes)
	}
	head := make([]byte, SniffLen)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return VideoInfo{}, err
	}
	c, ok := SniffContainer(head[:n])
	if !ok {
		return VideoInfo{}, ErrUnsupported
	}
	// "file:" keeps a path with a colon from naming another protocol.
	if err := probePixels(ctx, c, "file:"+path, opt); err != nil {
		return VideoInfo{}, err
	}
	return run(ctx, c, "file:"+path, nil, opt, fn)
}

// DecodeVideo decodes a video read from r, as DecodeVideoFile does. ffmpeg
// reads it as a stream and cannot seek, so an MP4 or MOV whose index (moov)
// is at the end fails with ErrCorrupt: give those as files.
func DecodeVideo(ctx context.Context, r io.Reader, opt VideoOptions, fn func(Frame) error) (VideoInfo, error) {
	opt = opt.withDefaults()
	br := bufio.NewReaderSize(r, SniffLen)
	head, err := br.Peek(SniffLen)
	if len(head) == 0 {
		if err == nil || errors.Is(err, io.EOF) {
			return VideoInfo{}, ErrEmpty
		}
		return VideoInfo{}, err
	}
	c, ok := SniffContainer(head)
	if !ok {
		return VideoInfo{}, ErrUnsupported
	}
	return run(ctx, c, "pipe:0", &limitedReader{r: br, left: opt.MaxBytes}, opt, fn)
}

// limitedReader fails with errLimit once more than left bytes have been
// read.
type limitedReader struct {
	r    io.Reader
	left int64
}

var errLimit = errors.New("input over its byte limit")

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, errLimit
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// args builds the ffmpeg command line: only the first video stream, scaled
// with area averaging and exact rounding into limited-range 4:4:4 YCbCr
// (asked for explicitly, whatever the input's range) in the input's own
// matrix, every frame passed through with its own timestamp, showinfo
// logging each frame's timestamp, size and matrix (without its checksums,
// which would cost a pass over every frame), and raw yuv444p on stdout.
//
// Staying in YCbCr spares ffmpeg the conversion to RGB and the pipe a
// quarter of its bytes. Measured with the CLI on a 30 s 1280x720 H.264
// clip scaled to 480x270, best of 4, piped: 1.84 s as yuv444p and 1.64 s
// as yuv420p against 2.49 s for RGBA, 1.47 s to decode alone; full range
// instead of limited costs 0.7 s more. The full_chroma flags change no byte of a YCbCr-to-YCbCr
// scale within one matrix.
//
// The matrix is left alone because converting it is what costs: swscale
// goes through an intermediate RGB picture that ffmpeg 5.1 rebuilds for
// every frame. The same clip tagged BT.709 (most phone videos) took 2.19 s
// converted to BT.601 and takes 1.75 s kept in BT.709 (best of 3; 1.69 s
// untagged either way). out_range=tv costs nothing on a limited-range input
// (1.69 s with, 1.72 s without) and narrows a full-range one in YCbCr, not
// through RGB (2.02 s, 2.31 s if the matrix is converted too), a chroma
// level off on saturated colours. readFrames learns each frame's matrix
// from showinfo and keeps BT.601 and BT.709 frames as they are; the rare
// others (BT.2020, SMPTE 240M, FCC) it rewrites as BT.601 itself through
// tables (toBT601, 0.6 ms a 480x270 frame).
// RGB inputs come out as BT.601, tagged unknown.
func args(c Container, input string, opt VideoOptions) []string {
	scale := fmt.Sprintf("scale=w='min(%d,iw)':h='min(%d,ih)':force_original_aspect_ratio=decrease"+
		":flags=area+accurate_rnd:out_range=tv", opt.MaxWidth, opt.MaxHeight)
	in, out := []string{}, []string{}
	if opt.live {
		in, out = liveInputArgs, liveOutputArgs
	}
	a := []string{
		"-nostdin", "-hide_banner", "-nostats", "-loglevel", "level+info",
		"-protocol_whitelist", "file,pipe",
	}
	a = append(a, in...)
	a = append(a,
		"-max_pixels", strconv.FormatInt(opt.MaxPixels, 10),
		"-f", c.demuxer(), "-i", input,
		"-map", "0:v:0", "-an", "-sn", "-dn",
		"-vf", scale+",showinfo=checksum=0",
		"-fps_mode", "passthrough",
		"-frames:v", strconv.Itoa(opt.MaxFrames+1),
	)
	a = append(a, out...)
	return append(a, "-pix_fmt", "yuv444p", "-f", "rawvideo", "pipe:1")
}

// run starts ffmpeg and delivers its frames.
func run(ctx context.Context, c Container, input string, stdin io.Reader, opt VideoOptions, fn func(Frame) error) (VideoInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, opt.FFmpeg, args(c, input, opt)...)
	var feed io.WriteCloser
	if stdin != nil {
		var err error
		if feed, err = cmd.StdinPipe(); err != nil {
			return VideoInfo{}, err
		}
	}
	// After the context ends ffmpeg is killed; give its pipes a moment to
	// close rather than hang on a stuck reader.
	cmd.WaitDelay = 2 * time.Second
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return VideoInfo{}, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return VideoInfo{}, err
	}
	if err := cmd.Start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			return VideoInfo{}, fmt.Errorf("%w: %v", ErrDecoderMissing, err)
		}
		return VideoInfo{}, err
	}
	log := &ffmpegLog{frames: make(chan frameMeta, 64), done: make(chan struct{})}
	go log.read(stderr)
	var overLimit atomic.Bool
	if stdin != nil {
		// Feed the stream ourselves rather than through cmd.Stdin: Wait
		// would wait for a copy blocked in a stalled reader. This goroutine
		// ends when stdin returns or after Wait closes the pipe; a reader
		// that never returns is the caller's to close.
		go func() {
			_, err := io.Copy(feed, stdin)
			if errors.Is(err, errLimit) {
				overLimit.Store(true)
				cancel() // never decode a truncated prefix as if it were whole
				return
			}
			feed.Close()
		}()
	}

	info := VideoInfo{Container: c}
	deliverErr := deliver(ctx, cancel, stdout, log, opt, fn, &info)
	if deliverErr != nil {
		cancel() // stop ffmpeg; its exit status no longer matters
	}
	// Drain what is left so ffmpeg can exit, then wait for the log reader
	// before Wait closes the pipes.
	extra, _ := io.Copy(io.Discard, stdout)
	<-log.done
	waitErr := cmd.Wait()
	if deliverErr == nil && ctx.Err() == nil && extra > 0 {
		// Pixels with no logged timestamp: frames and times no longer pair
		// up, so no time can be trusted.
		deliverErr = fmt.Errorf("%w: %d bytes of frames without timestamps", ErrCorrupt, extra)
	}

	switch {
	case overLimit.Load():
		return info, fmt.Errorf("%w: limit %d bytes", ErrTooLarge, opt.MaxBytes)
	case deliverErr != nil:
		return info, deliverErr
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return info, fmt.Errorf("%w after %v", ErrTimeout, opt.Timeout)
	case ctx.Err() != nil:
		return info, ctx.Err()
	case waitErr != nil || log.failed():
		return info, log.classify(waitErr)
	case info.Frames == 0:
		return info, ErrNoFrames
	}
	return info, nil
}

// readAhead is how many decoded frames may wait for the callback. While fn
// works on one frame a goroutine reads the next from the pipe, so ffmpeg
// keeps decoding on the other core instead of blocking on a full pipe.
const readAhead = 2

// decoded is one frame read from ffmpeg, waiting for the callback.
type decoded struct {
	img *YCbCr
	f   Frame
}

// deliver hands ffmpeg's frames to fn in order. A reader goroutine, which
// deliver waits for, fills at most readAhead+1 reused buffers. When fn fails
// deliver calls kill, so a reader blocked on the pipe is released.
func deliver(ctx context.Context, kill func(), stdout io.Reader, log *ffmpegLog, opt VideoOptions, fn func(Frame) error, info *VideoInfo) error {
	full := make(chan decoded, readAhead)
	free := make(chan *YCbCr, readAhead+1)
	stop := make(chan struct{})
	readErr := make(chan error, 1)
	go func() {
		defer close(full)
		readErr <- readFrames(ctx, stdout, log, opt, info, free, full, stop)
	}()
	var err error
	for d := range full {
		if err = fn(d.f); err != nil {
			break
		}
		info.Frames++
		info.LastTime = d.f.Time
		free <- d.img
	}
	close(stop)
	if err != nil {
		kill()
	}
	for range full {
		// Wait for the reader to see stop.
	}
	if err != nil {
		return err
	}
	return <-readErr
}

// readFrames pairs each logged frame with its pixels from stdout and sends
// them on full, taking buffers from free (allocating up to its capacity).
// It returns nil when ffmpeg's output ends, when stop closes or the context
// ends (run reports why), and an error for output that breaks the limits.
// It sets info's frame size.
func readFrames(ctx context.Context, stdout io.Reader, log *ffmpegLog, opt VideoOptions, info *VideoInfo, free chan *YCbCr, full chan<- decoded, stop <-chan struct{}) error {
	var first float64
	buffers, n := 0, 0
	for {
		var m frameMeta
		var ok bool
		select {
		case m, ok = <-log.frames:
		case <-ctx.Done():
			return nil
		case <-stop:
			return nil
		}
		if !ok {
			return nil
		}
		if n == 0 {
			if m.w <= 0 || m.h <= 0 || m.w > opt.MaxWidth || m.h > opt.MaxHeight {
				return fmt.Errorf("%w: ffmpeg delivered %dx%d frames", ErrCorrupt, m.w, m.h)
			}
			first = m.pts
			info.Width, info.Height = m.w, m.h
		} else if m.w != info.Width || m.h != info.Height {
			if !opt.live || m.w <= 0 || m.h <= 0 || m.w > opt.MaxWidth || m.h > opt.MaxHeight {
				return fmt.Errorf("%w: frame size changed from %dx%d to %dx%d", ErrCorrupt, info.Width, info.Height, m.w, m.h)
			}
			info.Width, info.Height = m.w, m.h
		}
		if n >= opt.MaxFrames {
			return fmt.Errorf("%w: more than %d frames", ErrTooLong, opt.MaxFrames)
		}
		var img *YCbCr
		select {
		case img = <-free:
		default:
			if buffers < cap(free) {
				img = newYCbCr(m.w, m.h)
				buffers++
				break
			}
			select {
			case img = <-free:
			case <-stop:
				return nil
			}
		}
		if r := img.Bounds(); r.Dx() != m.w || r.Dy() != m.h {
			// A live stream changed its picture size: this buffer
			// is replaced, not added.
			img = newYCbCr(m.w, m.h)
		}
		// rawvideo yuv444p is the three planes one after the other,
		// without padding.
		if err := readPlanes(stdout, img.planes); err != nil {
			// ffmpeg died mid-frame; its log says why.
			return nil
		}
		switch mx := matrixOf(m.space); mx {
		case bt601, bt709:
			img.bt709 = mx == bt709
		default:
			img.bt709 = false
			toBT601(img.planes, mx)
		}
		f := Frame{Image: img, Time: time.Duration((m.pts - first) * float64(time.Second)), Index: n, Duration: m.duration}
		n++
		select {
		case full <- decoded{img, f}:
		case <-stop:
			return nil
		}
	}
}

// readPlanes fills p's Y, Cb and Cr planes, in that order, from r.
func readPlanes(r io.Reader, p *image.YCbCr) error {
	for _, plane := range [][]byte{p.Y, p.Cb, p.Cr} {
		if _, err := io.ReadFull(r, plane); err != nil {
			return err
		}
	}
	return nil
}
