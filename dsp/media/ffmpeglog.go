package media

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// frameMeta is what showinfo logs about one output frame.
type frameMeta struct {
	pts      float64 // presentation time, seconds
	w, h     int
	duration time.Duration // the container's stated duration, when known
	// space is the frame's matrix as showinfo names it ("bt709",
	// "unknown", ...), from the colour line it logs after the frame line;
	// empty when none came.
	space string
}

// ffmpegLog reads ffmpeg's stderr (run with -loglevel level+info, which tags
// every line with its level): it sends each frame's metadata on frames and
// keeps the first error lines to explain a failure. Lines are cut at
// maxLogLine bytes and at most maxErrLines are kept, so a hostile file cannot
// make it hold much.
type ffmpegLog struct {
	frames chan frameMeta
	done   chan struct{} // closed when stderr is drained

	// Written by read only, read after done is closed.
	errs []string
}

const (
	maxLogLine  = 4096
	maxErrLines = 8
)

// read consumes stderr until EOF, then closes frames and done.
func (l *ffmpegLog) read(r io.Reader) {
	defer close(l.done)
	defer close(l.frames)
	br := bufio.NewReaderSize(r, maxLogLine)
	var duration time.Duration
	// A frame line waits in pending for its colour line, which follows
	// it, after any side data lines.
	var pending frameMeta
	havePending := false
	flush := func() {
		if havePending {
			l.frames <- pending
			havePending = false
		}
	}
	defer flush()
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// An over-long line (a hex dump of side data): keep its start,
			// skip the rest.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
		}
		if len(line) > 0 {
			component, level, msg := splitLine(line)
			showinfo := strings.HasPrefix(component, "Parsed_showinfo")
			if m, ok := parseShowinfo(msg); ok && showinfo {
				flush()
				m.duration = duration
				pending, havePending = m, true
			} else if space, ok := parseColorSpace(msg); ok && showinfo && havePending {
				pending.space = space
				flush()
			} else if d, ok := parseDuration(msg); ok && duration == 0 {
				duration = d
			} else if (level == "error" || level == "fatal" || level == "panic") && len(l.errs) < maxErrLines && !benign(component, msg) {
				l.errs = append(l.errs, strings.TrimSpace(string(msg)))
			}
		}
		if err != nil {
			// Keep draining is pointless: EOF or a closed pipe.
			return
		}
	}
}

// benign reports whether an error line is one ffmpeg logs about our own raw
// output without harm: with -fps_mode passthrough, frames of a variable
// frame rate video make the rawvideo muxer complain about timestamps it does
// not store, and it writes every frame anyway.
func benign(component string, msg []byte) bool {
	return component == "rawvideo" && bytes.Contains(msg, []byte("non monotonically increasing dts"))
}

// splitLine separates the tags of a level+info line: optional components
// ("[Parsed_showinfo_1 @ 0x5581...]"), then the level ("[info]").
func splitLine(line []byte) (component, level string, msg []byte) {
	tag := func(b []byte) (string, []byte, bool) {
		if len(b) == 0 || b[0] != '[' {
			return "", b, false
		}
		i := bytes.IndexByte(b, ']')
		if i < 0 {
			return "", b, false
		}
		return string(b[1:i]), bytes.TrimLeft(b[i+1:], " "), true
	}
	t, rest, ok := tag(line)
	if !ok {
		return "", "", line
	}
	// A component may log through another: "[h264 @ 0x..] [IMGUTILS @
	// 0x..] [error] ..."; the first names the line.
	for {
		name, _, isComponent := strings.Cut(t, " @ ")
		if !isComponent {
			return component, t, rest
		}
		if component == "" {
			component = name
		}
		if t, rest, ok = tag(rest); !ok {
			return component, "", rest
		}
	}
}

// parseShowinfo reads "n: 0 pts: 0 pts_time:0.0333 ... s:640x360 ..." from
// the message of a showinfo frame line.
func parseShowinfo(msg []byte) (frameMeta, bool) {
	var m frameMeta
	var havePTS, haveSize bool
	for f := range strings.FieldsSeq(string(msg)) {
		switch {
		case strings.HasPrefix(f, "pts_time:"):
			v, err := strconv.ParseFloat(f[len("pts_time:"):], 64)
			if err != nil || v != v || v > 1e9 || v < -1e9 {
				return frameMeta{}, false
			}
			m.pts, havePTS = v, true
		case strings.HasPrefix(f, "s:"):
			w, h, ok := strings.Cut(f[2:], "x")
			if !ok {
				return frameMeta{}, false
			}
			var err1, err2 error
			m.w, err1 = strconv.Atoi(w)
			m.h, err2 = strconv.Atoi(h)
			if err1 != nil || err2 != nil {
				return frameMeta{}, false
			}
			haveSize = true
		}
	}
	return m, havePTS && haveSize
}

// parseColorSpace reads the matrix from the colour line showinfo logs
// after each frame line: "color_range:tv color_space:bt709
// color_primaries:bt709 color_trc:bt709".
func parseColorSpace(msg []byte) (string, bool) {
	rest, ok := bytes.CutPrefix(msg, []byte("color_range:"))
	if !ok {
		return "", false
	}
	const key = " color_space:"
	i := bytes.Index(rest, []byte(key))
	if i < 0 {
		return "", false
	}
	name, _, _ := bytes.Cut(rest[i+len(key):], []byte(" "))
	return string(bytes.TrimSpace(name)), true
}

// parseDuration reads "Duration: 00:00:30.03, start: ..." from the input
// header.
func parseDuration(msg []byte) (time.Duration, bool) {
	s := strings.TrimSpace(string(msg))
	rest, ok := strings.CutPrefix(s, "Duration: ")
	if !ok {
		return 0, false
	}
	hms, _, _ := strings.Cut(rest, ",")
	parts := strings.Split(hms, ":")
	if len(parts) != 3 {
		return 0, false
	}
	h, err1 := strconv.Atoi(parts[0])
	m, err2 := strconv.Atoi(parts[1])
	sec, err3 := strconv.ParseFloat(parts[2], 64)
	if err1 != nil || err2 != nil || err3 != nil || h < 0 || h > 1000 || m < 0 || m > 59 || sec < 0 || sec >= 60 {
		return 0, false
	}
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec*float64(time.Second)), true
}

// failed reports whether ffmpeg logged an error. Call after done.
func (l *ffmpegLog) failed() bool { return len(l.errs) > 0 }

// classify turns ffmpeg's exit status and error lines into one of the
// package's errors, with ffmpeg's first message as detail. Call after done.
func (l *ffmpegLog) classify(exit error) error {
	msg := strings.Join(l.errs, "; ")
	if msg == "" && exit != nil {
		msg = exit.Error()
	}
	kind := ErrCorrupt
	switch {
	case strings.Contains(msg, "matches no streams") || strings.Contains(msg, "does not contain any stream"):
		kind = ErrNoVideo
	case strings.Contains(msg, maxPixelsMessage):
		kind = ErrTooManyPixels
	}
	return fmt.Errorf("%w: %s", kind, msg)
}
